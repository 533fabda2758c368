package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"slices"
	"sync"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Interception on Streamable HTTP (HTTPProxyOptions.Intercept). Each
// POST body on our endpoint is one client message and each SSE event, or
// JSON reply body, one agent message; under interception they go to the
// connection's interceptor instead of the other side, and what it
// delivers the httpPort sends:
//
//   - a client message as the body of a POST upstream. The POST whose
//     message it is, while that message is in the interceptor, takes the
//     first delivery and answers the client with the upstream's response;
//     a POST whose message was dropped or held back for later is answered
//     202 Accepted, empty, as the transport answers every POST but
//     initialize. Other deliveries (copies, injections, answers in the
//     client's place) go as POSTs of their own.
//   - an agent message as an SSE event, on the stream of its session when
//     one is open, else on the stream it arrived on, else on the
//     connection's stream; a JSON reply takes the first answer delivered
//     while it is in the interceptor. A message with no stream to go to
//     waits for one (a backlog of backlogLimit messages and backlogBytes;
//     beyond either the oldest is dropped and HTTPProxyOptions.Warn told).
//
// A message is recorded once, as what happened to it, with the envelope
// of where it was delivered. Without an interceptor none of this runs:
// requests go through serveRecorded, bytes unchanged.

// backlogLimit and backlogBytes bound the agent messages waiting for an
// SSE stream to open (the RFD's clients open one at once; one that never
// does must not grow the proxy's memory without end).
const (
	backlogLimit = 1024
	backlogBytes = 64 << 20
)

// icConnsLimit bounds the connections whose interception state the proxy
// keeps: an editor that never sends DELETE leaves its state behind, and a
// client opening connection after connection must not grow it forever.
// Beyond it the idle ones (no request in flight) are ended, oldest first.
const icConnsLimit = 1024

// errNoStream says an SSE stream ended before a message could be written.
var errNoStream = errors.New("the SSE stream has ended")

// httpConn is the interception state of one Streamable HTTP connection.
type httpConn struct {
	p    *HTTPProxy
	conn uint32
	ic   tap.Conn

	// clientMu and agentMu pass messages to ic one at a time per
	// direction, as tap.Conn asks, and guard post and cur.
	clientMu, agentMu sync.Mutex

	mu       sync.Mutex
	post     *postSlot                        // the POST whose message is in ic now
	cur      target                           // where the agent message in ic now came from
	template *http.Request                    // the last POST: headers for POSTs of our own
	connID   string                           // Acp-Connection-Id, once known
	asked    map[string]string                // requests by id → their session, to route answers
	streams  []*sseStream                     // open SSE streams, oldest first
	backlog  [][]byte                         // agent messages waiting for a stream
	waiting  int                              // their bytes
	dropped  int                              // messages the backlog's bounds dropped
	cancels  map[*context.CancelFunc]struct{} // requests in flight
	closed   bool

	// ctx ends with the connection's interception: the POSTs acpscope
	// sends on its own, and the reading of their answers, end with it.
	ctx    context.Context
	cancel context.CancelFunc
}

// postSlot is a client POST while its message is in the interceptor.
type postSlot struct {
	req  *http.Request
	used bool           // a delivery has taken it
	resp *http.Response // the upstream's answer to that delivery
	err  error
}

// target is where an agent message can be delivered: an SSE stream or a
// POST's JSON reply.
type target interface {
	// deliver writes msg; it reports false when the target cannot take
	// it (a reply already answered, a stream that has ended).
	deliver(msg []byte) (bool, error)
	envelope() *wire.Envelope
}

// httpConnFor returns conn's interception state, opening it on the
// interceptor at the connection's first request.
func (p *HTTPProxy) httpConnFor(conn uint32) *httpConn {
	p.icMu.Lock()
	defer p.icMu.Unlock()
	if h := p.icConns[conn]; h != nil {
		return h
	}
	if p.icConns == nil {
		p.icConns = map[uint32]*httpConn{}
	}
	if len(p.icConns) >= icConnsLimit {
		p.evictIdleLocked()
	}
	h := &httpConn{p: p, conn: conn, asked: map[string]string{}, cancels: map[*context.CancelFunc]struct{}{}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.ic = p.intercept.Open(conn, &httpPort{h})
	p.icConns[conn] = h
	return h
}

// evictIdleLocked ends the interception of the older half of the
// connections with no request in flight (connection numbers grow, so the
// lowest are the oldest).
func (p *HTTPProxy) evictIdleLocked() {
	var idle []uint32
	for n, h := range p.icConns {
		if h.idle() {
			idle = append(idle, n)
		}
	}
	slices.Sort(idle)
	for _, n := range idle[:max(len(idle)/2, min(len(idle), 1))] {
		h := p.icConns[n]
		delete(p.icConns, n)
		go h.end() // End delivers what is still held: not under icMu
	}
}

func (h *httpConn) idle() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.cancels) == 0
}

// end tells the interceptor that both directions are over.
func (h *httpConn) end() {
	h.ic.End(wire.DirClient)
	h.ic.End(wire.DirAgent)
	h.cancel()
}

// forget ends a connection's interception: what is held is delivered
// (if it still can be) and the state dropped.
func (p *HTTPProxy) forget(conn uint32) {
	p.icMu.Lock()
	h := p.icConns[conn]
	delete(p.icConns, conn)
	p.icMu.Unlock()
	if h != nil {
		h.end()
	}
}

// track makes ctx end when the connection is closed by a rule; the
// returned function stops tracking.
func (h *httpConn) track(cancel context.CancelFunc) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		cancel()
	}
	h.cancels[&cancel] = struct{}{}
	return func() {
		h.mu.Lock()
		delete(h.cancels, &cancel)
		h.mu.Unlock()
	}
}

// clientMessage hands a POST's message to the interceptor; the slot then
// holds the upstream's answer if the message was delivered.
func (h *httpConn) clientMessage(slot *postSlot, msg []byte) {
	h.clientMu.Lock()
	defer h.clientMu.Unlock()
	tmpl := slot.req.Clone(context.Background())
	tmpl.Body = nil
	h.noteAsked(wire.DirClient, msg, slot.req.Header.Get(acphttp.HeaderSessionID))
	h.mu.Lock()
	h.post, h.template = slot, tmpl
	h.mu.Unlock()
	_ = h.ic.Message(wire.DirClient, tap.Now(), msg)
	h.mu.Lock()
	h.post = nil
	h.mu.Unlock()
}

// agentMessage hands an agent message that arrived from t (nil: from a
// POST of our own) to the interceptor.
func (h *httpConn) agentMessage(t target, msg []byte) error {
	h.agentMu.Lock()
	defer h.agentMu.Unlock()
	h.noteAsked(wire.DirAgent, msg, "")
	h.mu.Lock()
	h.cur = t
	h.mu.Unlock()
	err := h.ic.Message(wire.DirAgent, tap.Now(), msg)
	h.mu.Lock()
	h.cur = nil
	h.mu.Unlock()
	return err
}

// learn notes the connection id a response revealed.
func (h *httpConn) learn(connID string) {
	if connID == "" {
		return
	}
	h.mu.Lock()
	if h.connID == "" {
		h.connID = connID
	}
	h.mu.Unlock()
}

// httpPort is the tap.Port of one Streamable HTTP connection.
type httpPort struct{ h *httpConn }

func (pt *httpPort) Deliver(dir wire.Dir, msg []byte, f *protocol.Fault) error {
	if dir == wire.DirClient {
		return pt.h.toAgent(msg, f)
	}
	return pt.h.toClient(msg, f)
}

func (pt *httpPort) Record(dir wire.Dir, t int64, msg []byte, f *protocol.Fault) {
	h := pt.h
	var env *wire.Envelope
	h.mu.Lock()
	if dir == wire.DirClient {
		req := h.template
		if h.post != nil {
			req = h.post.req
		}
		env = postEnvelope(req)
	} else if h.cur != nil {
		env = h.cur.envelope()
	}
	h.mu.Unlock()
	h.p.rec.Altered(h.conn, dir, t, msg, env, f)
}

// Close ends the connection as if the client had hung up: its requests
// and streams end and the upstream is sent the DELETE that ends it there.
func (pt *httpPort) Close() {
	h := pt.h
	h.mu.Lock()
	h.closed = true
	for c := range h.cancels {
		(*c)()
	}
	tmpl, connID := h.template, h.connID
	h.mu.Unlock()
	if tmpl == nil || connID == "" {
		return
	}
	del := h.p.outRequest(tmpl, nil)
	del.Method = http.MethodDelete
	del.Header.Set(acphttp.HeaderConnectionID, connID)
	del.Header.Del(acphttp.HeaderSessionID)
	resp, err := h.p.reverseProxy(tmpl).Transport.RoundTrip(del)
	if err != nil {
		return
	}
	resp.Body.Close()
	h.p.rec.Frame(h.conn, wire.DirAgent, tap.Now(), nil, 0, &wire.Envelope{Method: http.MethodDelete,
		Path: tmpl.URL.Path, Proto: resp.Proto, Status: resp.StatusCode, Stream: wire.StreamHTTPControl, ConnectionID: connID})
}

// Kill: the proxy starts no agent; a rule's kill ends the connection.
func (pt *httpPort) Kill() { pt.Close() }

// toAgent records a client message and POSTs it upstream: as the POST in
// the interceptor, whose client then gets the answer, or as one of ours.
func (h *httpConn) toAgent(msg []byte, f *protocol.Fault) error {
	h.mu.Lock()
	slot, req := h.post, h.template
	if slot != nil && !slot.used {
		slot.used, req = true, slot.req
	} else {
		slot = nil
	}
	h.mu.Unlock()
	if req == nil {
		return errors.New("no request of this connection to send a message as")
	}
	h.record(wire.DirClient, msg, postEnvelope(req), f)
	out := h.p.outRequest(req, msg)
	if slot == nil {
		out = out.WithContext(h.ctx)
		h.ownHeaders(out.Header, msg)
	}
	resp, err := h.p.reverseProxy(req).Transport.RoundTrip(out)
	if slot != nil {
		slot.resp, slot.err = resp, err
		return err
	}
	if err != nil {
		return err
	}
	go h.consume(out, resp)
	return nil
}

// noteAsked remembers the session of a request that arrived travelling
// in dir (params.sessionId, else the POST's Acp-Session-Id), so that
// its answer, whoever gives it, goes with that session.
func (h *httpConn) noteAsked(dir wire.Dir, msg []byte, session string) {
	m := wire.Classify(msg)
	if m.Kind != wire.KindRequest {
		return
	}
	if m.SessionID != "" {
		session = m.SessionID
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.asked) < 2*backlogLimit {
		h.asked[askedKey(dir, m.ID)] = session
	}
}

// askedKey keys a request by its direction and id.
func askedKey(dir wire.Dir, id []byte) string { return dir.String() + " " + string(id) }

// answered returns and forgets the session of the request travelling in
// dir that an answer with id answers.
func (h *httpConn) answered(dir wire.Dir, id []byte) string {
	k := askedKey(dir, id)
	session := h.asked[k]
	delete(h.asked, k)
	return session
}

// ownHeaders fits the headers of a POST of our own to its message: the
// connection's id and the message's session, or, for an answer, the
// session of the agent's request it answers. An answer to a request we
// never saw keeps the headers of the client's last POST.
func (h *httpConn) ownHeaders(hd http.Header, msg []byte) {
	m := wire.Classify(msg)
	answer := m.Kind == wire.KindResponse || m.Kind == wire.KindError
	session := m.SessionID
	h.mu.Lock()
	if answer {
		session = h.answered(wire.DirAgent, m.ID)
	}
	if h.connID != "" {
		hd.Set(acphttp.HeaderConnectionID, h.connID)
	}
	h.mu.Unlock()
	switch {
	case session != "":
		hd.Set(acphttp.HeaderSessionID, session)
	case !answer:
		hd.Del(acphttp.HeaderSessionID)
	}
}

// consume reads the answer to a POST of our own: a status is recorded,
// and a JSON body or SSE events are agent messages like any other.
func (h *httpConn) consume(req *http.Request, resp *http.Response) {
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	env := postEnvelope(req)
	env.Stream, env.Status = wire.StreamHTTPControl, resp.StatusCode
	env.Headers = acphttp.ResponseHeaders(resp.Header, req.Header)
	switch {
	case isCompressed(resp.Header):
		h.p.rec.Frame(h.conn, wire.DirAgent, tap.Now(), nil, 0, env)
	case acphttp.IsEventStream(ct):
		h.p.rec.Frame(h.conn, wire.DirAgent, tap.Now(), nil, 0, env)
		dec := wire.SSEDecoder{Limit: h.p.eventLimit()}
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			dec.Push(buf[:n], func(e *wire.SSEEvent) {
				switch {
				case e.Oversize:
					env := postEnvelope(req)
					env.Stream, env.Status, env.Headers, env.EventID = wire.StreamPOSTSSE, resp.StatusCode, nil, e.ID
					recordHeldTooBig(h.p.rec, h.conn, env, h.p.maxMessage)
				case !e.Comment && len(e.Data) > 0:
					_ = h.agentMessage(nil, bytes.Clone(e.Data))
				}
			})
			if err != nil {
				return
			}
		}
	case acphttp.IsJSON(ct):
		body, err := readAtMost(resp.Body, h.p.maxMessage)
		h.p.rec.Frame(h.conn, wire.DirAgent, tap.Now(), nil, 0, env)
		if err == nil && len(body) > 0 {
			_ = h.agentMessage(nil, body) // recorded where it is delivered
		}
	default: // a status, and what it says (400's reason, say)
		body, _ := readAtMost(resp.Body, 64<<10)
		h.p.rec.Frame(h.conn, wire.DirAgent, tap.Now(), body, 0, env)
	}
}

// toClient records an agent message and writes it where it belongs.
func (h *httpConn) toClient(msg []byte, f *protocol.Fault) error {
	m := wire.Classify(msg)
	t := h.route(&m)
	var env *wire.Envelope
	if t != nil {
		env = t.envelope()
	}
	h.record(wire.DirAgent, msg, env, f) // before the client can see it and answer
	for tries := 0; t != nil && tries < 4; tries++ {
		took, err := t.deliver(msg)
		if took {
			return err
		}
		t = h.route(&m) // the stream ended meanwhile
	}
	h.queue(msg)
	return nil
}

// record records a message delivered now, with f when acpscope altered it.
func (h *httpConn) record(dir wire.Dir, msg []byte, env *wire.Envelope, f *protocol.Fault) {
	if f == nil {
		h.p.rec.Frame(h.conn, dir, tap.Now(), msg, 0, env)
	} else {
		h.p.rec.Altered(h.conn, dir, tap.Now(), msg, env, f)
	}
}

// route picks the target of an agent message: the JSON reply in the
// interceptor, for an answer; the stream of the message's session; the
// stream the message came from; the connection's stream; the newest
// stream. Nil means none is open.
func (h *httpConn) route(m *wire.Message) target {
	h.mu.Lock()
	defer h.mu.Unlock()
	answer := m.Kind == wire.KindResponse || m.Kind == wire.KindError
	session := m.SessionID
	if answer {
		session = h.answered(wire.DirClient, m.ID)
	}
	if r, ok := h.cur.(*replyTarget); ok && answer && !r.answered() {
		return r
	}
	var conn, newest *sseStream
	for _, s := range h.streams {
		if s.ended() {
			continue
		}
		if session != "" && s.session == session {
			return s
		}
		if s.kind == wire.StreamConnection {
			conn = s
		}
		newest = s
	}
	if s, ok := h.cur.(*sseStream); ok && !s.ended() {
		return s
	}
	if conn != nil {
		return conn
	}
	if newest != nil {
		return newest
	}
	return nil
}

// queue keeps an agent message until a stream opens; past the backlog's
// bounds the oldest waiting message is dropped, and said so.
func (h *httpConn) queue(msg []byte) {
	h.mu.Lock()
	h.backlog = append(h.backlog, msg)
	h.waiting += len(msg)
	lost := 0
	for len(h.backlog) > 1 && (len(h.backlog) > backlogLimit || h.waiting > backlogBytes) {
		h.waiting -= len(h.backlog[0])
		h.backlog[0] = nil
		h.backlog = h.backlog[1:]
		lost++
	}
	h.dropped += lost
	total := h.dropped
	h.mu.Unlock()
	if lost > 0 {
		h.p.warn(fmt.Sprintf("proxy: connection %d opened no SSE stream for the agent's messages: dropped the oldest waiting (%d so far); they are recorded as sent but never reached the client", h.conn, total))
	}
}

// opened adds a stream and writes it the messages that were waiting.
func (h *httpConn) opened(s *sseStream) {
	h.mu.Lock()
	h.streams = append(h.streams, s)
	waiting := h.backlog
	h.backlog, h.waiting = nil, 0
	h.mu.Unlock()
	for _, msg := range waiting {
		if took, _ := s.deliver(msg); !took {
			h.queue(msg)
		}
	}
}

// closedStream removes an ended stream.
func (h *httpConn) closedStream(s *sseStream) {
	s.end()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, x := range h.streams {
		if x == s {
			h.streams = append(h.streams[:i], h.streams[i+1:]...)
			return
		}
	}
}

// postEnvelope is the envelope of a client message sent as req's body.
func postEnvelope(req *http.Request) *wire.Envelope {
	if req == nil {
		return nil
	}
	h := req.Header
	return &wire.Envelope{
		Method: http.MethodPost, Path: req.URL.Path, Proto: req.Proto, Stream: wire.StreamPOST,
		ConnectionID: h.Get(acphttp.HeaderConnectionID), SessionID: h.Get(acphttp.HeaderSessionID),
		Headers: acphttp.EnvelopeHeaders(h),
	}
}

// outRequest is the upstream request carrying msg in place of in's body,
// made as the reverse proxy makes one: hop-by-hop headers dropped, the
// upstream's URL and headers set. It outlives the client's request, as a
// message on stdio outlives its sender's patience.
func (p *HTTPProxy) outRequest(in *http.Request, msg []byte) *http.Request {
	out := in.Clone(context.WithoutCancel(in.Context()))
	out.RequestURI, out.Close, out.TransferEncoding = "", false, nil
	out.Body, out.ContentLength = http.NoBody, 0
	if msg != nil {
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(msg)), int64(len(msg))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(msg)), nil }
	}
	dropHopByHop(out.Header)
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header.Set("User-Agent", "") // as ReverseProxy: add no Go default
	}
	p.rewrite(&httputil.ProxyRequest{In: in, Out: out})
	return out
}

// hopByHop are the headers that concern one hop only (RFC 9110 §7.6.1).
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func dropHopByHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range bytes.Split([]byte(v), []byte(",")) {
			if name := string(bytes.TrimSpace(name)); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopByHop {
		h.Del(name)
	}
}

// readAtMost reads r to its end, failing once more than limit bytes came.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(b)) > limit {
		return nil, acphttp.ErrTooBig
	}
	return b, err
}
