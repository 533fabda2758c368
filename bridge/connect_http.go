package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	acp "github.com/acpscope/acpscope/protocol" // the test files declare a type named protocol
	"github.com/acpscope/acpscope/wire"
)

// httpLink is connect over Streamable HTTP: each stdin line is one
// POST; agent messages come from the connection-scoped GET stream (opened
// after initialize's 200), one GET stream per session (opened when a
// session/new, load, fork or resume response reveals the session), JSON
// POST replies and SSE-answered POSTs (older dialects).
type httpLink struct {
	*connector
	client *http.Client
	ctx    context.Context    // ends the GET streams
	cancel context.CancelFunc // ends ctx
	closed atomic.Bool        // stdin ended: stream ends are expected

	mu        sync.Mutex
	connID    string
	goose     bool                 // Acp-Session-Id is the connection id
	reqs      map[string]clientReq // client request id → what it asked
	agentReqs map[string]string    // agent request id → its sessionId
	open      map[string]bool      // sessions whose stream is open
	lastEvent map[string]time.Time // when each session stream's latest event came

	streams sync.WaitGroup // stream readers
	order   *sequencer     // restores the agent's order across serve's streams

	// The connection stream opens before initialize's answer reaches the
	// editor, but nothing on it may reach the editor before that answer
	// (a JSON reply carries no event id to order it by): its reader
	// waits for initShown, closed once the answer is delivered.
	initID    string        // the editor's initialize request id (h.mu)
	initShown chan struct{} // closed by showInit
	initOnce  sync.Once

	why   string // why the transport speaks what it does (for Info)
	proto string // the HTTP version of the latest response (h.mu)
}

type clientReq struct {
	method, sessionID string
}

// openHTTP makes the link; nothing is sent until the editor's first
// message (initialize), whose answer opens the connection.
func (b *connector) openHTTP(ctx context.Context) *httpLink {
	ctx, cancel := context.WithCancel(ctx)
	t, why := b.transport(ctx)
	h := &httpLink{connector: b, client: &http.Client{Transport: t, Jar: b.jar}, ctx: ctx, cancel: cancel, why: why,
		reqs: map[string]clientReq{}, agentReqs: map[string]string{}, open: map[string]bool{},
		lastEvent: map[string]time.Time{}, initShown: make(chan struct{})}
	h.order = newSequencer(h.deliver, b.fail)
	return h
}

// close deletes the connection on the server when clean, so its agent
// stops at once, then ends the GET streams and waits for their readers.
func (h *httpLink) close(clean bool) {
	h.closed.Store(true)
	if clean {
		h.deleteConnection()
	}
	h.cancel()
	done := make(chan struct{})
	go func() { h.streams.Wait(); close(done) }() // waiter: ends when every stream reader has
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	h.order.stop()
	h.client.CloseIdleConnections()
}

// envelope describes a frame of a request connect made, in the HTTP
// version of the latest response (the transport's, which stays the same).
func (h *httpLink) envelope(req *http.Request, stream string, status int, hdr http.Header) *wire.Envelope {
	h.mu.Lock()
	proto := h.proto
	h.mu.Unlock()
	e := &wire.Envelope{Method: req.Method, Path: req.URL.Path, Proto: proto, Status: status, Stream: stream,
		ConnectionID: req.Header.Get(acphttp.HeaderConnectionID), SessionID: req.Header.Get(acphttp.HeaderSessionID)}
	if hdr != nil && stream == wire.StreamPOST {
		e.Headers = acphttp.EnvelopeHeaders(hdr)
	} else if hdr != nil {
		e.Headers = acphttp.ResponseHeaders(hdr, req.Header)
		if e.ConnectionID == "" {
			e.ConnectionID = hdr.Get(acphttp.HeaderConnectionID) // initialize's reply names it
		}
	}
	return e
}

// newRequest builds a request carrying the connection and, when given,
// the session.
func (h *httpLink) newRequest(method string, body []byte, sessionID string) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(h.ctx, method, h.url.String(), rd)
	h.authHeader(req.Header)
	h.mu.Lock()
	connID, goose := h.connID, h.goose
	h.mu.Unlock()
	switch {
	case goose:
		req.Header.Set(acphttp.HeaderSessionID, connID)
	case connID != "":
		req.Header.Set(acphttp.HeaderConnectionID, connID)
		if sessionID != "" {
			req.Header.Set(acphttp.HeaderSessionID, sessionID)
		}
	}
	return req
}

// send POSTs one editor message and handles the immediate answer.
func (h *httpLink) send(line []byte) error {
	m := wire.Classify(line)
	sid := h.learnClient(&m)
	req := h.newRequest(http.MethodPost, line, sid)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if err := h.beforeLoad(&m); err != nil {
		return err
	}
	first, sent := h.needsConnection(), tap.Now()
	if !first {
		h.rec.Frame(connectConn, wire.DirClient, tap.Now(), line, 0, h.envelope(req, wire.StreamPOST, 0, req.Header))
	}
	resp, err := h.client.Do(req)
	if err == nil {
		h.noteProto(resp)
	}
	if first {
		// Recorded once the first response tells the HTTP version; no
		// stream exists yet that could record anything before it.
		h.rec.Frame(connectConn, wire.DirClient, sent, line, 0, h.envelope(req, wire.StreamPOST, 0, req.Header))
	}
	if err != nil && first {
		return unreachable(h.url, err)
	}
	if err != nil {
		return lostf("POST to %s failed: %v", h.url, err)
	}
	if first {
		h.adoptConnection(resp.Header)
	}
	switch {
	case acphttp.IsEventStream(resp.Header.Get("Content-Type")):
		h.streams.Add(1)
		go h.readStream(req, resp, wire.StreamPOSTSSE, "") // POST stream reader: ends with the response
		return h.afterInitialize(&m)
	case resp.StatusCode < 300 && acphttp.IsJSON(resp.Header.Get("Content-Type")):
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return lostf("reading the reply to a POST: %v", err)
		}
		h.rec.Frame(connectConn, wire.DirAgent, tap.Now(), body, 0, h.envelope(req, wire.StreamPOSTReply, resp.StatusCode, resp.Header))
		if err := h.afterInitialize(&m); err != nil {
			return err
		}
		return h.deliver(body)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h.rec.Frame(connectConn, wire.DirAgent, tap.Now(), body, 0, h.envelope(req, wire.StreamHTTPControl, resp.StatusCode, resp.Header))
	if resp.StatusCode < 300 {
		return h.afterLoad(&m)
	}
	if h.needsConnection() && (resp.StatusCode == http.StatusNotFound || resp.StatusCode >= 500) {
		return refusedAtStart(h.url, resp.StatusCode, string(bytes.TrimSpace(body)))
	}
	if h.needsConnection() && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		// No connection without the right token or origin: nothing that
		// follows can succeed, so connect ends as it does over WebSocket,
		// after telling the editor why rather than leaving it waiting.
		err := refusedAtStart(h.url, resp.StatusCode, string(bytes.TrimSpace(body)))
		if aerr := h.answerError(&m, err.Error()); aerr != nil {
			return aerr
		}
		return err
	}
	return h.refused(&m, resp.StatusCode, body)
}

// refused handles an error status: the connection is gone (404, 5xx) or
// this one message was refused, which the editor learns as a JSON-RPC
// error when it was a request (it would wait forever otherwise).
func (h *httpLink) refused(m *wire.Message, status int, body []byte) error {
	text := fmt.Sprintf("the server answered %d %s: %s", status, http.StatusText(status), bytes.TrimSpace(body))
	if status == http.StatusNotFound || status >= 500 {
		return lostf("%s", text)
	}
	h.opts.Warn("acpscope connect: " + text)
	return h.answerError(m, text)
}

// answerError answers the editor's request m with a JSON-RPC error
// saying text; a notification has no one waiting for an answer.
func (h *httpLink) answerError(m *wire.Message, text string) error {
	if m.Kind != wire.KindRequest {
		return nil
	}
	msg, _ := jsonString("acpscope connect: " + text)
	return h.emit([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32603,"message":` + msg + `}}`))
}

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

func (h *httpLink) needsConnection() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.connID == ""
}

// adoptConnection learns the connection id from a response: the RFD's
// Acp-Connection-Id, or goose's older Acp-Session-Id.
func (h *httpLink) adoptConnection(hdr http.Header) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id := hdr.Get(acphttp.HeaderConnectionID); id != "" {
		h.connID = id
	} else if id := hdr.Get(acphttp.HeaderSessionID); id != "" {
		h.connID, h.goose = id, true
	}
}

// afterInitialize opens the connection-scoped stream once the connection
// exists (RFD dialect), before the initialize reply reaches the editor.
func (h *httpLink) afterInitialize(m *wire.Message) error {
	if m.Method != "initialize" {
		return nil
	}
	h.mu.Lock()
	ok := h.connID != "" && !h.goose && !h.open[""]
	h.open[""] = true
	h.mu.Unlock()
	if !ok {
		return nil
	}
	return h.openStream("")
}

// beforeLoad opens a session's stream before its session/load or
// session/resume is POSTed, as the RFD's resume flow does, so the history
// the agent replays before it answers has a stream to arrive on, and
// precedes the answer. A server that refuses a stream for a session it
// does not know yet gets another try after the POST (afterLoad).
func (h *httpLink) beforeLoad(m *wire.Message) error {
	sid, ok := h.claimLoadStream(m)
	if !ok {
		return nil
	}
	opened, err := h.tryStream(sid, false)
	if err == nil && !opened {
		h.mu.Lock()
		delete(h.open, sid)
		h.mu.Unlock()
	}
	return err
}

// afterLoad opens a session's stream as soon as session/load or
// session/resume is accepted, when it could not be opened before.
func (h *httpLink) afterLoad(m *wire.Message) error {
	sid, ok := h.claimLoadStream(m)
	if !ok {
		return nil
	}
	return h.openStream(sid)
}

// claimLoadStream returns the session of a session/load or
// session/resume request whose stream is not open yet, and marks it open.
func (h *httpLink) claimLoadStream(m *wire.Message) (string, bool) {
	if m.Kind != wire.KindRequest || !acp.ResumesSession(m.Method) || m.SessionID == "" {
		return "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ok := !h.goose && h.connID != "" && !h.open[m.SessionID]
	h.open[m.SessionID] = true
	return m.SessionID, ok
}

// openStream opens a GET stream (the connection's when sessionID is "")
// and starts its reader; a refused session stream is a warning.
func (h *httpLink) openStream(sessionID string) error {
	_, err := h.tryStream(sessionID, true)
	return err
}

// tryStream opens a GET stream and starts its reader; it reports
// whether the stream opened. A refused session stream is no error.
func (h *httpLink) tryStream(sessionID string, warn bool) (bool, error) {
	req := h.newRequest(http.MethodGet, nil, sessionID)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		return false, lostf("opening the event stream: %v", err)
	}
	h.noteProto(resp)
	if resp.StatusCode != http.StatusOK || !acphttp.IsEventStream(resp.Header.Get("Content-Type")) {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.rec.Frame(connectConn, wire.DirAgent, tap.Now(), body, 0, h.envelope(req, wire.StreamHTTPControl, resp.StatusCode, resp.Header))
		if sessionID == "" {
			return false, lostf("the server refused the event stream: %d %s", resp.StatusCode, bytes.TrimSpace(body))
		}
		if warn {
			h.opts.Warn(fmt.Sprintf("acpscope connect: session %s stream refused: %d %s", sessionID, resp.StatusCode, bytes.TrimSpace(body)))
		}
		return false, nil
	}
	h.rec.Frame(connectConn, wire.DirAgent, tap.Now(), nil, 0, h.envelope(req, wire.StreamHTTPControl, resp.StatusCode, resp.Header))
	stream := wire.StreamConnection
	if sessionID != "" {
		stream = wire.StreamSession
	}
	h.streams.Add(1)
	go h.readStream(req, resp, stream, sessionID) // GET stream reader: ends with the stream
	return true, nil
}

// readStream delivers each event of an SSE response to the editor. The
// connection stream ending while stdin is open means the server is gone.
func (h *httpLink) readStream(req *http.Request, resp *http.Response, stream, sessionID string) {
	defer h.streams.Done()
	defer resp.Body.Close()
	var d wire.SSEDecoder
	var failed error
	ordered := resp.Header.Get(HeaderEventOrder) == "connection"
	handle := func(e *wire.SSEEvent) {
		if e.Comment || e.Data == nil || failed != nil {
			return
		}
		env := h.envelope(req, stream, resp.StatusCode, nil)
		env.EventID = e.ID
		h.rec.Frame(connectConn, wire.DirAgent, tap.Now(), e.Data, 0, env)
		if stream == wire.StreamConnection && !h.waitInitShown() {
			return
		}
		if id, err := strconv.ParseUint(e.ID, 10, 64); ordered && err == nil {
			failed = h.order.push(id, e.Data)
			return
		}
		if stream == wire.StreamSession {
			h.mu.Lock()
			h.lastEvent[sessionID] = time.Now()
			h.mu.Unlock()
		} else if stream == wire.StreamConnection {
			h.holdLoadAnswer(e.Data)
		}
		failed = h.deliver(e.Data)
	}
	buf := make([]byte, 32<<10)
	for failed == nil {
		n, err := resp.Body.Read(buf)
		d.Push(buf[:n], handle)
		if err != nil {
			break
		}
	}
	if failed != nil {
		h.fail(failed)
		return
	}
	if stream == wire.StreamConnection && !h.closed.Load() {
		h.fail(lostf("the server ended the connection's event stream"))
	}
	if stream == wire.StreamSession {
		// The server ended it (a failed session/load): a later load of
		// the session opens it again.
		h.mu.Lock()
		delete(h.open, sessionID)
		delete(h.lastEvent, sessionID)
		h.mu.Unlock()
	}
}

// noteProto learns the HTTP version from a response and, the first
// time, says which one connect speaks and why.
func (h *httpLink) noteProto(resp *http.Response) {
	h.mu.Lock()
	first := h.proto == ""
	h.proto = resp.Proto
	h.mu.Unlock()
	if !first {
		return
	}
	why := h.why
	if resp.ProtoMajor < 2 && h.url.Scheme == "https" && !h.opts.HTTP1 {
		why = "the server did not offer HTTP/2 through TLS; the RFD requires HTTP/2"
	}
	h.opts.Info(fmt.Sprintf("acpscope connect: %s to %s (%s)", resp.Proto, h.url.Redacted(), why))
}

// deliver passes one agent message to the editor, first opening the
// stream of a session it reveals, so nothing of that session is missed.
func (h *httpLink) deliver(msg []byte) error {
	m := wire.Classify(msg)
	if sid := h.learnAgent(&m); sid != "" {
		if err := h.openStream(sid); err != nil {
			return err
		}
	}
	if err := h.fromServer(msg); err != nil {
		return err
	}
	if m.Kind == wire.KindResponse || m.Kind == wire.KindError {
		h.mu.Lock()
		isInit := h.initID != "" && string(m.ID) == h.initID
		h.mu.Unlock()
		if isInit {
			h.initOnce.Do(func() { close(h.initShown) })
		}
	}
	return nil
}

// waitInitShown waits until the editor has initialize's answer; false
// when the link ends first.
func (h *httpLink) waitInitShown() bool {
	select {
	case <-h.initShown:
		return true
	case <-h.ctx.Done():
		return false
	}
}

// learnClient notes a client message and returns the session its POST
// belongs to (for Acp-Session-Id).
func (h *httpLink) learnClient(m *wire.Message) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch m.Kind {
	case wire.KindRequest:
		h.reqs[string(m.ID)] = clientReq{method: m.Method, sessionID: m.SessionID}
		if m.Method == "initialize" {
			h.initID = string(m.ID)
		}
		return m.SessionID
	case wire.KindNotification:
		return m.SessionID
	case wire.KindResponse, wire.KindError:
		sid := h.agentReqs[string(m.ID)]
		delete(h.agentReqs, string(m.ID))
		return sid
	}
	return ""
}

// learnAgent notes an agent message and returns a session whose stream
// must be opened now ("" when none).
func (h *httpLink) learnAgent(m *wire.Message) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch m.Kind {
	case wire.KindRequest:
		h.agentReqs[string(m.ID)] = m.SessionID
	case wire.KindResponse:
		req, ok := h.reqs[string(m.ID)]
		delete(h.reqs, string(m.ID))
		if !ok || !connLevelMethods[req.method] || h.goose {
			return ""
		}
		sid := wire.StringMember(m.Result, "sessionId")
		if sid == "" {
			sid = req.sessionID
		}
		if sid == "" || h.open[sid] {
			return ""
		}
		h.open[sid] = true
		return sid
	case wire.KindError:
		delete(h.reqs, string(m.ID))
	}
	return ""
}

// deleteConnection ends the connection on the server when the editor is
// done, so its agent stops at once.
func (h *httpLink) deleteConnection() {
	h.mu.Lock()
	connID := h.connID
	h.mu.Unlock()
	if connID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req := h.newRequest(http.MethodDelete, nil, "")
	req = req.WithContext(ctx)
	resp, err := h.client.Do(req)
	if err != nil {
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h.rec.Frame(connectConn, wire.DirAgent, tap.Now(), body, 0, h.envelope(req, wire.StreamHTTPControl, resp.StatusCode, resp.Header))
}
