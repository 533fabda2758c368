package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// serveIntercepted handles a request on our endpoint under interception
// (see http_intercept.go); it returns the size of the body it read.
func (p *HTTPProxy) serveIntercepted(w http.ResponseWriter, r *http.Request) int {
	ex := p.newExchange(r)
	h := p.httpConnFor(ex.conn)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer h.track(cancel)()
	r = r.WithContext(ctx)
	iw := &icWriter{ResponseWriter: w, h: h, ex: ex, conns: &p.conns, limit: p.maxMessage}
	defer func() {
		v := recover() // ReverseProxy aborts with a panic when a copy fails
		iw.end()
		ex.finish(v != nil)
		if r.Method == http.MethodDelete && ex.status/100 == 2 {
			p.forget(ex.conn)
		}
		if v != nil {
			panic(v)
		}
	}()
	if r.Method != http.MethodPost {
		p.reverseProxy(r).ServeHTTP(iw, r)
		return 0
	}
	body, err := acphttp.ReadBody(r, p.maxMessage)
	switch {
	case errors.Is(err, acphttp.ErrTooBig):
		p.tooBig(iw, r.ContentLength)
		return 0
	case err != nil:
		return 0 // the client's body broke off; nobody to answer
	}
	slot := &postSlot{req: r}
	h.clientMessage(slot, body)
	switch {
	case slot.resp != nil:
		r.Body, r.ContentLength = http.NoBody, 0
		p.answerWith(slot.resp).ServeHTTP(iw, r)
	case slot.err != nil:
		p.upstreamError(iw, r, slot.err)
	default: // dropped, or held back for later: accepted, as the transport does
		iw.WriteHeader(http.StatusAccepted)
	}
	return len(body)
}

// answerWith is a reverse proxy whose upstream answer has already come:
// it copies resp to the client as any answer is copied.
func (p *HTTPProxy) answerWith(resp *http.Response) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:       func(*httputil.ProxyRequest) {},
		Transport:     answered{resp},
		FlushInterval: -1,
		ErrorHandler:  p.upstreamError,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
}

type answered struct{ resp *http.Response }

func (a answered) RoundTrip(*http.Request) (*http.Response, error) { return a.resp, nil }

// icWriter is the ResponseWriter under interception. A JSON reply is
// kept until the interceptor delivers it; SSE events go to the
// interceptor one by one and reach the client only through the stream;
// other bodies pass as they come.
type icWriter struct {
	http.ResponseWriter
	h       *httpConn
	ex      *exchange
	conns   *acphttp.ConnTable
	limit   int64
	written bool
	stream  *sseStream   // an SSE response
	reply   *replyTarget // a JSON response
	err     error        // the stream's write error, ending the copy
}

func (w *icWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if w.written {
		return
	}
	w.written = true
	w.ex.respond(code, w.Header(), w.conns)
	w.h.learn(w.ex.connID)
	switch w.ex.mode {
	case modeJSON:
		w.reply = &replyTarget{w: w.ResponseWriter, ex: w.ex, status: code}
		return // written when the reply is delivered
	case modeSSE:
		w.stream = newSSEStream(w.ResponseWriter, w.ex)
		w.ResponseWriter.WriteHeader(code)
		_ = w.stream.flush()
		w.h.opened(w.stream)
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *icWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	switch {
	case w.stream != nil:
		w.ex.sse.Push(b, w.event)
		if w.err != nil {
			return 0, w.err
		}
		return len(b), nil
	case w.reply != nil:
		w.ex.tap(b, w.limit)
		return len(b), nil
	}
	w.ex.tap(b, w.limit)
	return w.ResponseWriter.Write(b)
}

// FlushError keeps ReverseProxy's flushes off a stream's writer, which
// deliveries from other goroutines write to under its lock.
func (w *icWriter) FlushError() error {
	switch {
	case w.stream != nil:
		return w.stream.flush()
	case w.reply != nil:
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// event passes one SSE event on: a message to the interceptor, anything
// else (a keep-alive, a lone id) straight to the stream.
func (w *icWriter) event(e *wire.SSEEvent) {
	if w.err != nil {
		return
	}
	if e.Comment || e.Data == nil {
		if _, err := w.stream.write(encodeBare(e)); err != nil {
			w.err = err
		}
		return
	}
	if e.Oversize {
		w.dropOversize(e)
		return
	}
	w.stream.arrived(e)
	msg := e.Data
	if !e.Detached {
		msg = bytes.Clone(msg)
	}
	_ = w.h.agentMessage(w.stream, msg)
	w.err = w.stream.failure() // the client is gone: stop reading the upstream
}

// dropOversize gives up an event over --max-message-size: interception
// delivers whole messages, and this one was not kept. The client gets a
// comment saying so (and the event's id, to resume from), the capture a
// record of the drop.
func (w *icWriter) dropOversize(e *wire.SSEEvent) {
	env := w.ex.envelope(w.stream.kind, nil)
	env.EventID = e.ID
	note := recordHeldTooBig(w.ex.rec, w.ex.conn, env, w.limit)
	b := wire.AppendSSEComment(nil, "acpscope: "+note)
	if e.HasID {
		b = append(b, encodeBare(&wire.SSEEvent{ID: e.ID, HasID: true})...)
	}
	if _, err := w.stream.write(b); err != nil {
		w.err = err
	}
}

// recordHeldTooBig records the drop of an agent's event over limit that
// interception could not hold, and returns what it noted.
func recordHeldTooBig(rec tap.Recorder, conn uint32, env *wire.Envelope, limit int64) string {
	note := acphttp.HeldTooBigText(limit)
	rec.Altered(conn, wire.DirAgent, tap.Now(), nil, env,
		&protocol.Fault{Action: protocol.ActionDrop, Stage: protocol.StageDropped, By: protocol.ByProxy, Note: note})
	return note
}

// encodeBare encodes an event that carries no message.
func encodeBare(e *wire.SSEEvent) []byte {
	if e.Comment {
		return wire.AppendSSEComment(nil, string(e.Data))
	}
	var b []byte
	if e.HasID {
		b = append(append(append(b, "id: "...), e.ID...), '\n')
	}
	if e.HasRetry {
		b = append(strconv.AppendInt(append(b, "retry: "...), e.Retry, 10), '\n')
	}
	return append(b, '\n')
}

// end hands a JSON reply to the interceptor once it is whole, and
// retires the stream.
func (w *icWriter) end() {
	if w.stream != nil {
		w.h.closedStream(w.stream)
	}
	if w.reply == nil {
		return
	}
	body, overflow := w.ex.copy, w.ex.overflow
	w.ex.copy, w.ex.handled = nil, true
	if overflow {
		w.reply.fail("acpscope: the agent's reply is over --max-message-size and cannot be intercepted")
		return
	}
	if len(body) > 0 {
		_ = w.h.agentMessage(w.reply, body)
	}
	w.reply.finish()
}

// replyTarget is a POST's JSON reply: the first answer delivered while
// it is in the interceptor becomes its body.
type replyTarget struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	ex     *exchange
	status int
	done   bool
}

func (r *replyTarget) answered() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

func (r *replyTarget) deliver(msg []byte) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false, nil
	}
	r.done = true
	r.w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	r.w.WriteHeader(r.status)
	_, err := r.w.Write(msg)
	return true, err
}

func (r *replyTarget) envelope() *wire.Envelope {
	return r.ex.envelope(wire.StreamPOSTReply, r.ex.header)
}

// finish answers a reply nothing was delivered to (dropped, or held
// back): the upstream's status and headers, an empty body.
func (r *replyTarget) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.done = true
		r.w.Header().Set("Content-Length", "0")
		r.w.WriteHeader(r.status)
	}
}

func (r *replyTarget) fail(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	r.w.Header().Del("Content-Length")
	r.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	r.w.WriteHeader(http.StatusBadGateway)
	io.WriteString(r.w, text+"\n")
}

// sseStream is an SSE response under interception. Its events are
// written whole, under its lock, by whichever goroutine delivers them.
type sseStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	ex      *exchange
	kind    string // wire.StreamConnection, StreamSession or StreamPOSTSSE
	session string // the Acp-Session-Id of a session stream
	lastID  string // the id of the event now in the interceptor
	lastEv  string // and its type ("" for the default, message)
	done    bool
	err     error // the first write that failed
}

func newSSEStream(w http.ResponseWriter, ex *exchange) *sseStream {
	s := &sseStream{w: w, ex: ex, kind: ex.sseStream()}
	if s.kind == wire.StreamSession {
		s.session = ex.req.Header.Get(acphttp.HeaderSessionID)
	}
	return s
}

// arrived notes the id and type of the event about to go to the
// interceptor: the event it delivers carries them on, so a client's
// Last-Event-ID still resumes where it should and a listener for the
// type still hears it.
func (s *sseStream) arrived(e *wire.SSEEvent) {
	s.mu.Lock()
	s.lastID, s.lastEv = e.ID, e.Event
	s.mu.Unlock()
}

func (s *sseStream) deliver(msg []byte) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false, nil
	}
	var ev []byte
	if s.lastEv != "" {
		ev = append(append(append(ev, "event: "...), s.lastEv...), '\n')
	}
	ev = wire.AppendSSEEvent(ev, s.lastID, msg)
	s.lastID, s.lastEv = "", ""
	return true, s.writeLocked(ev)
}

func (s *sseStream) write(b []byte) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false, errNoStream
	}
	return true, s.writeLocked(b)
}

// writeLocked writes and flushes; a failure ends the stream.
func (s *sseStream) writeLocked(b []byte) error {
	_, err := s.w.Write(b)
	if err == nil {
		err = http.NewResponseController(s.w).Flush()
	}
	if err != nil {
		s.done, s.err = true, err
	}
	return err
}

func (s *sseStream) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *sseStream) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	return http.NewResponseController(s.w).Flush()
}

func (s *sseStream) envelope() *wire.Envelope {
	s.mu.Lock()
	id := s.lastID
	s.mu.Unlock()
	env := s.ex.envelope(s.kind, nil)
	env.EventID = id
	return env
}

func (s *sseStream) ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// end stops deliveries: the handler is returning and its writer with it.
func (s *sseStream) end() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}
