package telemetry

import (
	"context"
	"sort"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Builder turns a capture's records, in order, into spans: the one span
// builder behind both a live run (fed by a capture.Watcher) and
// `export --format otlp` (fed by a capture.Reader). Given the same
// records it starts and ends the same spans with the same ids, times and
// attributes. It is not safe for concurrent use: one goroutine feeds it.
type Builder struct {
	tracer trace.Tracer
	ids    deriver
	text   texts
	bodies bool

	conns   map[uint32]*connState
	pending map[reqKey]*call
	order   []*call // pending calls, oldest first (some already ended)
	turns   []*call // open session/prompt calls, in the order they began
	tools   map[toolKey]*toolSpan
	models  map[sessKey]string
	last    int64 // the latest record time seen
}

// reqKey names a request in flight: JSON-RPC ids are per connection and
// per sender.
type reqKey struct {
	conn uint32
	dir  wire.Dir
	id   string
}

type sessKey struct {
	conn    uint32
	session string
}

type toolKey struct {
	conn        uint32
	session, id string
}

// call is an open request span.
type call struct {
	span    *span
	ctx     context.Context
	key     reqKey
	method  string
	session string
	seq     uint64
	start   int64
	turn    *turnState // set on session/prompt
	// reqBody is kept only for the few methods whose result is read
	// against their request (the permission options offered).
	reqBody []byte
	ended   bool
}

// maxPending bounds the requests in flight the builder remembers, and
// maxTools the open tool calls: a peer that never answers (or an echo)
// must not grow memory without end. Past the bound the oldest is ended
// as unanswered, as the store forgets requests past its own bound.
const (
	maxPending = 10_000
	maxTools   = 10_000
	// maxConns bounds the connection spans held open: a long-running
	// serve or proxy sees a new connection per editor window. Past it
	// the one quiet the longest is ended.
	maxConns = 1_000
)

// connState is a transport connection: its span holds what belongs to
// no request (stderr between turns, stray notifications, odd frames).
type connState struct {
	num          uint32
	span         *span
	last         int64
	agent        string
	msgs, stderr int64
}

// BuilderOptions configure a Builder.
type BuilderOptions struct {
	// Bodies attaches redacted message bodies to spans and events.
	Bodies bool
	// Redact adds to the default redaction rules.
	Redact capture.RedactOptions
}

// newBuilder returns a builder of the spans of the capture meta
// describes, started with tracer (whose provider must use idGenerator).
func newBuilder(tracer trace.Tracer, meta capture.Meta, opts BuilderOptions) (*Builder, error) {
	red, err := capture.NewRedactor(opts.Redact)
	if err != nil {
		return nil, err
	}
	return &Builder{
		tracer:  tracer,
		ids:     newDeriver(meta),
		text:    texts{red: red, cache: map[string]string{}},
		bodies:  opts.Bodies,
		conns:   map[uint32]*connState{},
		pending: map[reqKey]*call{},
		tools:   map[toolKey]*toolSpan{},
		models:  map[sessKey]string{},
	}, nil
}

func at0(ns int64) trace.SpanStartEventOption { return trace.WithTimestamp(time.Unix(0, ns)) }

// Record takes the next record of the capture.
func (b *Builder) Record(rec *capture.Record) {
	b.last = max(b.last, rec.Time)
	c := b.conn(rec)
	c.last = max(c.last, rec.Time)
	if rec.Fault != nil && !b.altered(c, rec) {
		return
	}
	switch rec.Kind {
	case wire.KindRequest:
		c.msgs++
		b.request(c, rec)
	case wire.KindResponse, wire.KindError:
		c.msgs++
		b.response(c, rec)
	case wire.KindNotification:
		c.msgs++
		b.notification(c, rec)
	case wire.KindStderr:
		c.stderr++
		b.stderrLine(c, rec)
	case wire.KindBatch: // its members follow as records of their own
	default:
		b.oddFrame(c, rec)
	}
}

// conn returns the state of rec's connection, starting its span.
func (b *Builder) conn(rec *capture.Record) *connState {
	if c := b.conns[rec.Conn]; c != nil {
		return c
	}
	c := &connState{num: rec.Conn}
	ctx := withIDs(context.Background(), b.ids.ids("connection", rec.Seq))
	_, sp := b.tracer.Start(ctx, "acp connection", at0(rec.Time), trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(keyConnection.Int64(int64(rec.Conn)), keySeq.Int64(int64(rec.Seq))))
	c.span = b.newSpan(sp)
	if len(b.conns) >= maxConns {
		b.endQuietestConn()
	}
	b.conns[rec.Conn] = c
	return c
}

// endQuietestConn ends the span of the connection whose last record is
// the oldest; a later record on it starts a new one.
func (b *Builder) endQuietestConn() {
	var quiet *connState
	for _, c := range b.conns {
		if quiet == nil || c.last < quiet.last || (c.last == quiet.last && c.num < quiet.num) {
			quiet = c
		}
	}
	b.endConn(quiet)
}

// endConn ends a connection's span at its last record.
func (b *Builder) endConn(c *connState) {
	c.span.SetAttributes(keyMessages.Int64(c.msgs), keyStderrLines.Int64(c.stderr))
	c.span.end(c.last)
	delete(b.conns, c.num)
}

// request starts a request's span, under the W3C trace context its
// params carry, else under the turn or tool call it belongs to, else as
// the root of a trace of its own.
func (b *Builder) request(c *connState, rec *capture.Record) {
	params := at(rec.Body, "params")
	parent := b.parentOf(rec, params)
	if sc, ok := remoteParent(params); ok {
		parent = trace.ContextWithRemoteSpanContext(context.Background(), sc)
	}
	opts := []trace.SpanStartOption{at0(rec.Time), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(b.requestAttrs(rec, params)...)}
	if !trace.SpanContextFromContext(parent).IsValid() {
		opts = append(opts, trace.WithNewRoot())
	}
	ctx, sp := b.tracer.Start(withIDs(parent, b.ids.ids("request", rec.Seq)), spanName(rec.Method), opts...)
	cl := &call{span: b.newSpan(sp), ctx: ctx, key: reqKey{rec.Conn, rec.Dir, string(rec.ID)}, method: rec.Method,
		session: rec.Session, seq: rec.Seq, start: rec.Time}
	if old := b.pending[cl.key]; old != nil {
		// A duplicate id: the first request can no longer be paired.
		old.span.SetAttributes(keyDuplicateID.Bool(true))
		b.endCall(old, rec.Time, true)
	}
	b.pending[cl.key] = cl
	b.order = append(b.order, cl)
	b.onRequest(cl, rec)
	b.evict(rec.Time)
}

// evict ends the oldest requests in flight while there are too many.
func (b *Builder) evict(t int64) {
	for len(b.pending) > maxPending {
		cl := b.order[0]
		b.order = b.order[1:]
		if !cl.ended {
			delete(b.pending, cl.key)
			b.endCall(cl, t, true)
		}
	}
	if len(b.order) > 2*maxPending { // drop ended calls from the queue
		live := b.order[:0]
		for _, cl := range b.order {
			if !cl.ended {
				live = append(live, cl)
			}
		}
		clear(b.order[len(live):])
		b.order = live
	}
}

// parentOf is the span a request belongs to: a permission request's
// tool call, else the open turn of its session.
func (b *Builder) parentOf(rec *capture.Record, params []byte) context.Context {
	if rec.Session == "" || rec.Method == "session/prompt" {
		return context.Background()
	}
	if rec.Method == "session/request_permission" {
		if t := b.tools[toolKey{rec.Conn, rec.Session, strAt(params, "toolCall", "toolCallId")}]; t != nil {
			return t.ctx
		}
	}
	if turn := b.turnOf(rec.Conn, rec.Session); turn != nil {
		return turn.ctx
	}
	return context.Background()
}

// requestAttrs are a request span's attributes when it starts.
func (b *Builder) requestAttrs(rec *capture.Record, params []byte) []attribute.KeyValue {
	attrs := []attribute.KeyValue{rpcSystem, rpcVersion,
		b.text.str(semconv.RPCMethodKey, rec.Method),
		b.text.str(semconv.RPCJSONRPCRequestIDKey, idText(rec.ID)),
		keyDirection.String(direction(rec.Dir)),
		keyConnection.Int64(int64(rec.Conn)),
		keySeq.Int64(int64(rec.Seq)),
	}
	if rec.Session != "" {
		attrs = append(attrs, b.text.str(keySession, rec.Session))
	}
	if b.bodies {
		attrs = append(attrs, keyReqBody.String(b.text.body(rec.Method, rec.Body)))
	}
	return append(attrs, b.methodAttrs(rec, params)...)
}

// response ends the span of the request it answers.
func (b *Builder) response(c *connState, rec *capture.Record) {
	key := reqKey{rec.Conn, rec.Dir.Reverse(), string(rec.ID)}
	cl := b.pending[key]
	if cl == nil {
		c.span.event("acp.unpaired_response", at0(rec.Time), trace.WithAttributes(b.errorAttrs(rec)...))
		return
	}
	delete(b.pending, key)
	cl.span.SetAttributes(keyResponseSeq.Int64(int64(rec.Seq)))
	if b.bodies {
		cl.span.SetAttributes(keyRespBody.String(b.text.body(cl.method, rec.Body)))
	}
	if rec.Kind == wire.KindError {
		attrs := b.errorAttrs(rec)
		cl.span.SetAttributes(attrs...)
		cl.span.SetStatus(codes.Error, b.text.clean(strAt(rec.Body, "error", "message")))
	} else {
		b.onResult(c, cl, rec, at(rec.Body, "result"))
	}
	b.endCall(cl, rec.Time, false)
}

// errorAttrs describe an error response: its JSON-RPC code and message.
func (b *Builder) errorAttrs(rec *capture.Record) []attribute.KeyValue {
	attrs := []attribute.KeyValue{keySeq.Int64(int64(rec.Seq))}
	if rec.Kind != wire.KindError {
		return append(attrs, b.text.str(semconv.RPCJSONRPCRequestIDKey, idText(rec.ID)))
	}
	code, _ := intAt(rec.Body, "error", "code")
	return append(attrs,
		semconv.RPCJSONRPCErrorCode(int(code)),
		b.text.str(semconv.RPCJSONRPCErrorMessageKey, strAt(rec.Body, "error", "message")),
		semconv.ErrorTypeKey.String(errorType(code)),
		b.text.str(semconv.RPCJSONRPCRequestIDKey, idText(rec.ID)))
}

// endCall ends a request span at t, and the tool calls still open that
// began in it; unanswered marks one the capture ended (or a duplicate id
// displaced) before its response.
func (b *Builder) endCall(cl *call, t int64, unanswered bool) {
	cl.ended = true
	b.endTools(func(ts *toolSpan) bool { return ts.owner == cl }, t)
	if unanswered {
		cl.span.SetAttributes(keyUnanswered.Bool(true))
		cl.span.SetStatus(codes.Error, "no response was recorded")
	}
	if cl.turn != nil {
		b.endTurn(cl, t)
	}
	cl.span.end(t)
}

// stderrLine is an event on the turn running when the agent wrote it,
// else on its connection's span.
func (b *Builder) stderrLine(c *connState, rec *capture.Record) {
	attrs := trace.WithAttributes(b.text.str(keyStderrText, string(rec.Body)), keySeq.Int64(int64(rec.Seq)))
	if turn := b.latestTurn(rec.Conn); turn != nil {
		turn.span.event("acp.stderr", at0(rec.Time), attrs)
		return
	}
	c.span.event("acp.stderr", at0(rec.Time), attrs)
}

// altered notes on the running turn (else the connection) that acpscope
// altered rec, and reports whether rec reached its receiver, so spans
// show what each side received, as lint judges it: a dropped answer
// leaves its request unanswered, with this event saying why. A request
// acpscope answered in the other side's place still opens its span, so
// the made-up answer ends it.
func (b *Builder) altered(c *connState, rec *capture.Record) bool {
	f := rec.Fault
	attrs := trace.WithAttributes(keySeq.Int64(int64(rec.Seq)), keyFaultID.Int64(int64(f.ID)),
		keyFaultAction.String(f.Action), keyFaultStage.String(f.Stage), keyFaultRule.String(f.Rule),
		keyFaultBy.String(f.By), semconv.RPCMethodKey.String(rec.Method))
	if turn := b.latestTurn(rec.Conn); turn != nil {
		turn.span.event("acp.fault", at0(rec.Time), attrs)
	} else {
		c.span.event("acp.fault", at0(rec.Time), attrs)
	}
	return f.Delivered() || f.Action == protocol.ActionAnswer
}

// oddFrame notes on the connection's span a frame that is not a
// message: invalid JSON, a non-protocol line, an HTTP error status.
func (b *Builder) oddFrame(c *connState, rec *capture.Record) {
	if env := rec.HTTP; env != nil && env.Stream == wire.StreamHTTPControl {
		if env.Status >= 400 {
			c.span.event("acp.http_error", at0(rec.Time), trace.WithAttributes(
				keyHTTPStatus.Int(env.Status), keySeq.Int64(int64(rec.Seq))))
		}
		return
	}
	c.span.event("acp.bad_frame", at0(rec.Time), trace.WithAttributes(
		keyFrameKind.String(rec.Kind.String()), keySeq.Int64(int64(rec.Seq))))
}

// Finish ends every span still open at the time of the last record:
// requests never answered, turns and tool calls cut short, connections.
// The Builder takes no records after it.
func (b *Builder) Finish() {
	var open []*call
	for _, cl := range b.pending {
		open = append(open, cl)
	}
	sort.Slice(open, func(i, j int) bool { return open[i].seq < open[j].seq })
	for _, cl := range open {
		b.endCall(cl, b.last, true)
	}
	clear(b.pending)
	b.order = nil
	b.endTools(func(*toolSpan) bool { return true }, b.last)
	nums := make([]uint32, 0, len(b.conns))
	for n := range b.conns {
		nums = append(nums, n)
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	for _, n := range nums {
		b.endConn(b.conns[n])
	}
}

func direction(d wire.Dir) string {
	if d == wire.DirAgent {
		return "agent_to_client"
	}
	return "client_to_agent"
}

// spanName is the method, as the RPC conventions name spans.
func spanName(method string) string {
	if method == "" {
		return "(no method)"
	}
	return cut(method, 128)
}

// errorType names a JSON-RPC error code for error.type.
func errorType(code int64) string {
	switch code {
	case -32700:
		return "parse_error"
	case -32600:
		return "invalid_request"
	case -32601:
		return "method_not_found"
	case -32602:
		return "invalid_params"
	case -32603:
		return "internal_error"
	case -32800:
		return "request_cancelled"
	case -32000:
		return "auth_required"
	case -32002:
		return "resource_not_found"
	}
	return "jsonrpc_" + itoa(code)
}
