package telemetry

import (
	"context"
	"sort"

	"github.com/acpscope/acpscope/capture"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Notifications: session/update variants feed the turn they arrive in
// (chunks counted, the first one timed, tool calls as spans of their own,
// usage and plan noted); the rest become events on the span they belong
// to.

// toolSpan is a tool call from its tool_call update to its final status.
type toolSpan struct {
	span   *span
	ctx    context.Context
	key    toolKey
	seq    uint64
	status string
	owner  *call // the turn or request it began in; it ends with it
}

// notification handles a notification in either direction.
func (b *Builder) notification(c *connState, rec *capture.Record) {
	switch rec.Method {
	case "session/update":
		b.update(c, rec, at(rec.Body, "params"))
	case "session/cancel":
		target := b.target(c, rec.Conn, rec.Session)
		if turn := b.turnOf(rec.Conn, rec.Session); turn != nil {
			turn.turn.cancelled = true
		}
		target.event("session/cancel", at0(rec.Time), b.eventAttrs(rec))
	case "$/cancel_request":
		params := at(rec.Body, "params")
		target := c.span
		if cl := b.pending[reqKey{rec.Conn, rec.Dir, string(at(params, "requestId"))}]; cl != nil {
			target = cl.span
		}
		target.event("$/cancel_request", at0(rec.Time), b.eventAttrs(rec,
			b.text.str(keyCancelID, idText(at(params, "requestId")))))
	default:
		b.target(c, rec.Conn, rec.Session).event(spanName(rec.Method), at0(rec.Time), b.eventAttrs(rec))
	}
}

// target is the span a session's notification belongs to: its open turn,
// else its latest request in flight (session/load replaying history),
// else the connection.
func (b *Builder) target(c *connState, conn uint32, session string) *span {
	if session == "" {
		return c.span
	}
	if cl := b.sessionCall(conn, session); cl != nil {
		return cl.span
	}
	return c.span
}

// sessionCall is the call a session's updates belong to: its open turn,
// else its latest request in flight (session/load replaying history).
func (b *Builder) sessionCall(conn uint32, session string) *call {
	if turn := b.turnOf(conn, session); turn != nil {
		return turn
	}
	var latest *call
	for _, cl := range b.pending {
		if cl.key.conn == conn && cl.session == session && (latest == nil || cl.seq > latest.seq) {
			latest = cl
		}
	}
	return latest
}

// eventAttrs are an event's attributes: the record and, with bodies on,
// the redacted message.
func (b *Builder) eventAttrs(rec *capture.Record, more ...attribute.KeyValue) trace.EventOption {
	attrs := append([]attribute.KeyValue{keySeq.Int64(int64(rec.Seq))}, more...)
	if b.bodies {
		attrs = append(attrs, keyBody.String(b.text.body(rec.Method, rec.Body)))
	}
	return trace.WithAttributes(attrs...)
}

// update handles one session/update.
func (b *Builder) update(c *connState, rec *capture.Record, params []byte) {
	upd := at(params, "update")
	kind := strAt(upd, "sessionUpdate")
	turn := b.turnOf(rec.Conn, rec.Session)
	switch kind {
	case "agent_message_chunk":
		if turn != nil {
			turn.turn.chunks++
			b.firstChunk(turn, rec)
		}
		return
	case "agent_thought_chunk":
		if turn != nil {
			turn.turn.thoughts++
		}
		return
	case "user_message_chunk":
		if turn != nil {
			return // the prompt echoed back: the turn's request holds it
		}
	case "tool_call", "tool_call_update":
		b.toolUpdate(rec, upd, turn)
		return
	case "usage_update":
		if turn != nil {
			b.noteUsage(turn.turn, upd)
		}
	case "config_option_update":
		b.noteModel(rec.Conn, rec.Session, upd)
	}
	b.target(c, rec.Conn, rec.Session).event(updateName(kind), at0(rec.Time), b.eventAttrs(rec, b.updateAttrs(kind, upd)...))
}

// updateAttrs describe the update variants that become events.
func (b *Builder) updateAttrs(kind string, upd []byte) []attribute.KeyValue {
	attrs := []attribute.KeyValue{b.text.str(keyUpdateKind, kind)}
	switch kind {
	case "plan":
		done := 0
		each(upd, func(el []byte) {
			if strAt(el, "status") == "completed" {
				done++
			}
		}, "entries")
		attrs = append(attrs, keyPlanEntries.Int(count(upd, "entries")), keyPlanDone.Int(done))
	case "current_mode_update":
		attrs = append(attrs, b.text.str(keyModeID, strAt(upd, "currentModeId")))
	case "usage_update":
		if v, ok := intAt(upd, "used"); ok {
			attrs = append(attrs, keyCtxUsed.Int64(v))
		}
		if v, ok := intAt(upd, "size"); ok {
			attrs = append(attrs, keyCtxSize.Int64(v))
		}
	}
	return attrs
}

// noteUsage keeps the turn's latest context and cost figures.
func (b *Builder) noteUsage(ts *turnState, upd []byte) {
	if v, ok := intAt(upd, "used"); ok {
		ts.ctxUsed, ts.haveUsed = v, true
	}
	if v, ok := intAt(upd, "size"); ok {
		ts.ctxSize, ts.haveSize = v, true
	}
	if v, ok := floatAt(upd, "cost", "amount"); ok {
		ts.cost, ts.costSet, ts.currency = v, true, strAt(upd, "cost", "currency")
	}
}

// toolUpdate starts a tool call's span at its first sight and ends it at
// a final status; the statuses in between are events.
func (b *Builder) toolUpdate(rec *capture.Record, upd []byte, turn *call) {
	key := toolKey{rec.Conn, rec.Session, strAt(upd, "toolCallId")}
	ts := b.tools[key]
	if ts == nil {
		ts = b.startTool(rec, upd, key, turn)
	}
	if title := strAt(upd, "title"); title != "" {
		ts.span.SetAttributes(b.text.str(keyToolTitle, title))
	}
	if kind := strAt(upd, "kind"); kind != "" {
		ts.span.SetAttributes(b.text.str(keyToolKind, kind))
	}
	status := strAt(upd, "status")
	if status == "" || status == ts.status {
		return
	}
	ts.status = status
	ts.span.event("acp.tool_call.status", at0(rec.Time), trace.WithAttributes(
		b.text.str(keyToolStatus, status), keySeq.Int64(int64(rec.Seq))))
	if isFinal(status) {
		b.endTool(ts, rec.Time, false)
	}
}

// startTool opens a tool call's span under its turn, or the request
// replaying it (session/load), else as a root of its own.
func (b *Builder) startTool(rec *capture.Record, upd []byte, key toolKey, turn *call) *toolSpan {
	parent := context.Background()
	opts := []trace.SpanStartOption{at0(rec.Time), trace.WithSpanKind(trace.SpanKindInternal)}
	if turn != nil {
		turn.turn.tools++
	}
	owner := b.sessionCall(rec.Conn, rec.Session)
	if owner != nil {
		parent = owner.ctx
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	kind := strAt(upd, "kind")
	if kind == "" {
		kind = "other"
	}
	opts = append(opts, trace.WithAttributes(semconv.GenAIOperationNameExecuteTool,
		b.text.str(semconv.GenAIToolCallIDKey, key.id), b.text.str(keyToolID, key.id),
		b.text.str(keySession, key.session), keyConnection.Int64(int64(key.conn)), keySeq.Int64(int64(rec.Seq))))
	ctx, sp := b.tracer.Start(withIDs(parent, b.ids.ids("tool", rec.Seq)), "execute_tool "+cut(kind, 64), opts...)
	ts := &toolSpan{span: b.newSpan(sp), ctx: ctx, key: key, seq: rec.Seq, owner: owner}
	if len(b.tools) >= maxTools {
		b.endTools(func(*toolSpan) bool { return true }, rec.Time) // rare: cheaper than an order of its own
	}
	b.tools[key] = ts
	return ts
}

// endTool ends a tool call's span; unfinished marks one whose turn or
// capture ended before a final status.
func (b *Builder) endTool(ts *toolSpan, t int64, unfinished bool) {
	ts.span.SetAttributes(b.text.str(keyToolStatus, ts.status))
	switch {
	case unfinished:
		ts.span.SetAttributes(keyToolUnfinished.Bool(true))
	case ts.status == "failed":
		ts.span.SetStatus(codes.Error, "tool call failed")
	}
	ts.span.end(t)
	delete(b.tools, ts.key)
}

// endTools ends, in the order they began, the open tool calls that
// match.
func (b *Builder) endTools(match func(*toolSpan) bool, t int64) {
	var open []*toolSpan
	for _, ts := range b.tools {
		if match(ts) {
			open = append(open, ts)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].seq < open[j].seq })
	for _, ts := range open {
		b.endTool(ts, t, true)
	}
}
