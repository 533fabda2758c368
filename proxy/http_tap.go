package proxy

import (
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
)

// exchange follows one recorded request through the proxy: it records
// the request body when the upstream has read it all, and the response
// as the client receives it, each message just before the client can
// see it (so an answer is never recorded before what it answers).
type exchange struct {
	rec  tap.Recorder
	conn uint32
	req  *http.Request
	// connID and sessionID are the Acp-* ids in force: the request's,
	// or the ones its response revealed.
	connID, sessionID string

	body *bodyTap

	status   int
	mode     responseMode
	header   http.Header // the response headers as sent
	copy     []byte      // json and control modes: the response body
	overflow bool        // the body outgrew the limit: copy dropped
	sse      wire.SSEDecoder
	// eventEnv is the envelope of the SSE events of this response,
	// built once: every event without an id shares it (the capture
	// keeps envelopes as they are, and never changes one).
	eventEnv *wire.Envelope
	// handled says an interceptor took the JSON reply, and recorded it
	// as what happened to it.
	handled bool

	// An event stream the proxy relays itself (http_events.go): the
	// response, its body, how many trailers it announced, the recorder
	// as a Borrower (nil when it cannot borrow) and the buffer of the
	// read being tapped.
	events    *http.Response
	eventBody io.ReadCloser
	announced int
	lender    tap.Borrower
	lent      *readChunk
	held      *atomic.Int64 // the proxy's count of read buffers held
}

type responseMode uint8

const (
	modeControl responseMode = iota // no message in the body
	modeJSON                        // a JSON body: a message (initialize's reply)
	modeSSE                         // an event stream
	modeOpaque                      // a compressed body: forwarded, not parsed
)

func (p *HTTPProxy) newExchange(r *http.Request) *exchange {
	lender, _ := p.rec.(tap.Borrower)
	return &exchange{
		lender:    lender,
		held:      &p.held.readChunks,
		rec:       p.rec,
		conn:      p.conns.ForRequest(r.Header),
		req:       r,
		connID:    r.Header.Get(acphttp.HeaderConnectionID),
		sessionID: r.Header.Get(acphttp.HeaderSessionID),
		// An upstream's event over the limit is forwarded whole but
		// copied no further than the limit, like a JSON body.
		sse: wire.SSEDecoder{Limit: p.eventLimit()},
	}
}

// eventLimit is the most of one SSE event a decoder holds.
func (p *HTTPProxy) eventLimit() int { return int(min(p.maxMessage, math.MaxInt)) }

// serveRecorded forwards one request on our endpoint and records it; it
// returns the size of the request body it kept.
func (p *HTTPProxy) serveRecorded(w http.ResponseWriter, r *http.Request) (size int) {
	ex := p.newExchange(r)
	tw := &tapWriter{ResponseWriter: w, ex: ex, conns: &p.conns, limit: p.maxMessage}
	if r.ContentLength > p.maxMessage {
		p.tooBig(tw, r.ContentLength) // refused unread, the upstream never asked
		ex.finish(false)
		return 0
	}
	if r.Method == http.MethodPost || (r.Body != nil && r.ContentLength > 0) {
		ex.body = newBodyTap(ex, r, p.maxMessage)
		r.Body = ex.body
	}
	defer func() {
		v := recover() // ReverseProxy aborts with a panic when a copy fails
		ex.closeEvents()
		size = ex.finish(v != nil)
		if v != nil {
			panic(v)
		}
	}()
	p.reverseProxy(r).ServeHTTP(tw, withExchange(r, ex))
	if ex.eventBody != nil {
		ex.relayEvents(w, p.maxMessage)
	}
	return 0
}

// tooBig answers 413 for a request body over --max-message-size.
func (p *HTTPProxy) tooBig(w http.ResponseWriter, size int64) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	io.WriteString(w, "acpscope: "+acphttp.TooBigText(size, p.maxMessage)+"\n")
}

// envelope builds the envelope of a frame of this exchange.
func (ex *exchange) envelope(stream string, withHeaders http.Header) *wire.Envelope {
	env := &wire.Envelope{
		Method:       ex.req.Method,
		Path:         ex.req.URL.Path,
		Proto:        ex.req.Proto,
		Status:       ex.status,
		Stream:       stream,
		ConnectionID: ex.connID,
		SessionID:    ex.sessionID,
	}
	if withHeaders != nil {
		env.Headers = acphttp.ResponseHeaders(withHeaders, ex.req.Header)
	}
	return env
}

// recordRequest records the request body once it is complete (or cut).
// It may run on the transport's goroutine while the handler's records
// the response, so it reads only what never changes: the request.
func (ex *exchange) recordRequest(b []byte, flags wire.Flags) {
	h := ex.req.Header
	env := &wire.Envelope{
		Method: ex.req.Method, Path: ex.req.URL.Path, Proto: ex.req.Proto, Stream: wire.StreamPOST,
		ConnectionID: h.Get(acphttp.HeaderConnectionID), SessionID: h.Get(acphttp.HeaderSessionID),
		Headers: acphttp.EnvelopeHeaders(h),
	}
	ex.rec.TakeFrame(ex.conn, wire.DirClient, tap.Now(), b, flags, env)
}

// respond is called once the response status and headers are final.
func (ex *exchange) respond(status int, h http.Header, conns *acphttp.ConnTable) {
	ex.status, ex.header = status, h.Clone()
	if ex.connID == "" {
		ex.connID = h.Get(acphttp.HeaderConnectionID)
	}
	if ex.sessionID == "" {
		ex.sessionID = h.Get(acphttp.HeaderSessionID)
	}
	if acphttp.ConnKey(ex.req.Header) == "" {
		conns.Bind(acphttp.ConnKey(h), ex.conn)
	}
	ct := h.Get("Content-Type")
	switch {
	case isCompressed(h):
		// The client asked for compression and the upstream used it: the
		// bytes pass unchanged, but there are no messages to read in
		// them. The opening record says so through Content-Encoding.
		ex.mode = modeOpaque
		ex.rec.Frame(ex.conn, wire.DirAgent, tap.Now(), nil, 0, ex.envelope(wire.StreamHTTPControl, h))
	case acphttp.IsEventStream(ct):
		ex.mode = modeSSE
		ex.eventEnv = ex.envelope(ex.sseStream(), nil)
		// The stream's opening, so its status and headers are on record.
		ex.rec.Frame(ex.conn, wire.DirAgent, tap.Now(), nil, 0, ex.envelope(wire.StreamHTTPControl, h))
	case acphttp.IsJSON(ct) && status != http.StatusSwitchingProtocols:
		ex.mode = modeJSON
	default:
		ex.mode = modeControl
	}
}

// tap takes a copy of response bytes already written to the client. A
// JSON or control body over limit is forwarded but no longer copied; it
// is recorded empty and flagged truncated.
func (ex *exchange) tap(b []byte, limit int64) {
	switch ex.mode {
	case modeOpaque:
	case modeSSE:
		ex.sse.Push(b, ex.recordEvent)
	default:
		if ex.overflow || int64(len(ex.copy)+len(b)) > limit {
			ex.copy, ex.overflow = nil, true
			return
		}
		ex.copy = append(ex.copy, b...)
	}
}

// recordEvent records one SSE event's data; comments and events without
// data (a lone id) are forwarded only. An event over the limit is
// recorded empty and flagged truncated.
func (ex *exchange) recordEvent(e *wire.SSEEvent) {
	if e.Comment || e.Data == nil {
		return
	}
	env := ex.eventEnv
	if e.ID != "" {
		withID := *env
		withID.EventID = e.ID
		env = &withID
	}
	var flags wire.Flags
	if e.Partial {
		flags |= wire.FlagPartial
	}
	if e.Oversize {
		flags |= wire.FlagTruncated
	}
	switch {
	case e.Detached: // a big event's data, which the decoder lets go of
		ex.rec.TakeFrame(ex.conn, wire.DirAgent, tap.Now(), e.Data, flags, env)
		return
	case e.InChunk && ex.lent != nil && ex.lender != nil && len(e.Data) >= minLentEvent: // in a buffer the relay owns
		ex.lender.LendFrame(ex.conn, wire.DirAgent, tap.Now(), e.Data, flags, env, ex.lent.lend())
		return
	}
	ex.rec.Frame(ex.conn, wire.DirAgent, tap.Now(), e.Data, flags, env)
}

// sseStream names the stream an event arrived on: a POST's own response,
// a session-scoped GET (both Acp-* headers), or the connection's GET.
func (ex *exchange) sseStream() string {
	switch {
	case ex.req.Method == http.MethodPost:
		return wire.StreamPOSTSSE
	case ex.req.Header.Get(acphttp.HeaderConnectionID) != "" && ex.req.Header.Get(acphttp.HeaderSessionID) != "":
		return wire.StreamSession
	}
	return wire.StreamConnection
}

// finish records what is still pending when the exchange ends and
// returns the size of the request body it kept. cut says the response
// was interrupted.
func (ex *exchange) finish(cut bool) int {
	size := 0
	if ex.body != nil {
		size = ex.body.finish()
	}
	if ex.status == 0 {
		return size // no response was written (the client left first)
	}
	var flags wire.Flags
	if cut {
		flags |= wire.FlagPartial
	}
	if ex.overflow {
		flags |= wire.FlagTruncated
	}
	switch ex.mode {
	case modeOpaque:
	case modeSSE:
		ex.sse.End(ex.recordEvent)
	case modeJSON:
		if ex.handled {
			return size
		}
		if len(ex.copy) == 0 && !ex.overflow {
			ex.rec.Frame(ex.conn, wire.DirAgent, tap.Now(), nil, flags, ex.envelope(wire.StreamHTTPControl, ex.header))
			return size
		}
		ex.rec.TakeFrame(ex.conn, wire.DirAgent, tap.Now(), ex.copy, flags, ex.envelope(wire.StreamPOSTReply, ex.header))
	default:
		ex.rec.TakeFrame(ex.conn, wire.DirAgent, tap.Now(), ex.copy, flags, ex.envelope(wire.StreamHTTPControl, ex.header))
	}
	ex.copy = nil
	return size
}

// errExchangeEnded is what a read of a request body answers once its
// exchange is over.
var errExchangeEnded = errors.New("acpscope: the request body was read after its exchange ended")

// bodyTap passes a request body to the upstream and keeps a copy, which
// it records as soon as the body is complete: before the upstream can
// answer, so a request is always recorded before its response. The copy
// is one buffer of the body's size when Content-Length gives it, and is
// handed to the capture as it is. A body that crosses the limit fails the
// upstream request (the client gets 413) and is not recorded.
type bodyTap struct {
	ex     *exchange
	inner  io.ReadCloser
	want   int64 // Content-Length, -1 when unknown
	limit  int64 // --max-message-size
	mu     sync.Mutex
	buf    acphttp.BodyBuffer
	size   int // bytes kept, for the memory given back after
	done   bool
	tooBig bool
	// eof: the client's body has ended. Read answers io.EOF from then
	// on without asking it again: the server closes a body it has seen
	// end once the response starts, and the transport, having sent
	// Content-Length bytes, reads once more to confirm the end. Passed
	// on, that read failed on the closed body, and the transport tore
	// down the upstream connection in the middle of the response.
	eof bool
	err error
	// ended: the exchange is over (finish). A transport still sending
	// the body then reads an error, as ReverseProxy's wrapper answers
	// once its handler has returned.
	ended bool
}

// newBodyTap taps r's body; a Content-Length is at most limit.
func newBodyTap(ex *exchange, r *http.Request, limit int64) *bodyTap {
	b := &bodyTap{ex: ex, inner: r.Body, want: r.ContentLength, limit: limit}
	if b.want > 0 {
		b.buf = acphttp.NewBodyBuffer(int(b.want))
	}
	return b
}

// Read holds the lock across the client read so that finish, which may
// run while the transport still reads, never reads the body concurrently.
func (b *bodyTap) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eof { // before ended: the transport's read that confirms the end
		return 0, io.EOF
	}
	if b.ended {
		return 0, errExchangeEnded
	}
	if b.tooBig {
		return 0, acphttp.ErrTooBig
	}
	n, err := b.inner.Read(p)
	b.eof = err == io.EOF
	if b.done {
		return n, err
	}
	if !b.keepLocked(p[:n]) {
		return 0, acphttp.ErrTooBig // the bytes over the limit never reach the upstream
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	if err == io.EOF || (b.want > 0 && int64(b.buf.Len()) >= b.want) {
		b.recordLocked(0)
	}
	return n, err
}

// keepLocked adds read bytes to the copy; past the limit it drops the
// copy and reports false.
func (b *bodyTap) keepLocked(p []byte) bool {
	if int64(b.buf.Len()+len(p)) > b.limit {
		b.tooBig, b.done, b.buf = true, true, acphttp.BodyBuffer{}
		return false
	}
	b.buf.Append(p)
	b.size = b.buf.Len()
	return true
}

// exceeded reports whether the body crossed the limit.
func (b *bodyTap) exceeded() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tooBig
}

// Close does not close the client's body: finish may still need to read
// what the upstream did not (an unreachable upstream reads nothing).
func (b *bodyTap) Close() error { return nil }

// finish reads whatever the upstream left unread (up to the limit) and
// records the body, flagged partial if the client's body ended in an
// error. It returns the size of the body kept.
func (b *bodyTap) finish() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	if b.done {
		return b.size
	}
	if b.err == nil && !b.drainLocked() {
		return b.size // over the limit: not recorded
	}
	var flags wire.Flags
	if b.err != nil {
		flags |= wire.FlagPartial
	}
	b.recordLocked(flags)
	return b.size
}

// drainLocked reads the rest of the client's body into the copy; it
// reports false when the body crossed the limit.
func (b *bodyTap) drainLocked() bool {
	p := make([]byte, 32<<10)
	for {
		n, err := b.inner.Read(p)
		if !b.keepLocked(p[:n]) {
			return false
		}
		if err == io.EOF {
			return true
		}
		if err != nil {
			b.err = err
			return true
		}
	}
}

// recordLocked hands the body to the capture, which keeps the buffer.
func (b *bodyTap) recordLocked(flags wire.Flags) {
	b.done = true
	b.ex.recordRequest(b.buf.Bytes(), flags)
}

// tapWriter is the ResponseWriter ReverseProxy writes to: it gives the
// exchange a copy of every write and passes it to the client's writer.
// Flush and Hijack reach the client's writer through Unwrap.
type tapWriter struct {
	http.ResponseWriter
	ex      *exchange
	conns   *acphttp.ConnTable
	limit   int64 // how much of a JSON or control body is copied
	written bool
}

func (w *tapWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.ResponseWriter.WriteHeader(code) // informational: pass on
		return
	}
	if w.written {
		return
	}
	w.written = true
	w.ex.respond(code, w.Header(), w.conns)
	w.ResponseWriter.WriteHeader(code)
}

// Write taps a copy before passing the bytes on: an event must be
// recorded before the client can see it and answer, or the answer could
// be recorded first. The tap only decodes SSE lines and copies.
func (w *tapWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	w.ex.tap(b, w.limit)
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController find Flush on the real writer.
func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isCompressed reports a Content-Encoding other than identity.
func isCompressed(h http.Header) bool {
	ce := strings.TrimSpace(strings.ToLower(h.Get("Content-Encoding")))
	return ce != "" && ce != "identity"
}
