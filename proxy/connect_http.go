package proxy

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

	"github.com/acpscope/acpscope/wire"
)

// httpBridge is connect over Streamable HTTP: each stdin line is one
// POST; agent messages come from the connection-scoped GET stream (opened
// after initialize's 200), one GET stream per session (opened when a
// session/new, load, fork or resume response reveals the session), JSON
// POST replies and SSE-answered POSTs (older dialects).
type httpBridge struct {
	*bridge
	client *http.Client
	ctx    context.Context // ends the GET streams
	closed atomic.Bool     // stdin ended: stream ends are expected

	mu        sync.Mutex
	connID    string
	goose     bool                 // Acp-Session-Id is the connection id
	reqs      map[string]clientReq // client request id → what it asked
	agentReqs map[string]string    // agent request id → its sessionId
	open      map[string]bool      // sessions whose stream is open

	streams sync.WaitGroup // stream readers
	order   *sequencer     // restores the agent's order across serve's streams
}

type clientReq struct {
	method, sessionID string
}

func (b *bridge) runHTTP(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &httpBridge{bridge: b, client: b.httpClient(), ctx: ctx,
		reqs: map[string]clientReq{}, agentReqs: map[string]string{}, open: map[string]bool{}}
	h.order = newSequencer(h.deliver, b.fail)
	defer h.order.stop()
	defer h.client.CloseIdleConnections()
	stdinDone := make(chan error, 1)
	go func() { stdinDone <- readLines(b.opts.Stdin, h.send) }() // stdin pump: ends at EOF or a fatal error
	var result error
	select {
	case result = <-stdinDone:
	case result = <-b.lost:
	case <-ctx.Done():
		result = ctx.Err()
	}
	h.closed.Store(true)
	if result == nil {
		h.deleteConnection()
	}
	cancel()
	done := make(chan struct{})
	go func() { h.streams.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	return result
}

// httpClient speaks HTTP/1.1 or, with H2C, cleartext HTTP/2 to http://
// servers, and negotiates HTTP/2 over TLS; it keeps cookies.
func (b *bridge) httpClient() *http.Client {
	h1, h2c := newTransports(b.opts.UnsafeInsecure)
	t := h1
	if b.opts.H2C {
		t = h2c
	}
	return &http.Client{Transport: t, Jar: b.jar}
}

// envelope describes a frame of a request connect made.
func (h *httpBridge) envelope(req *http.Request, stream string, status int, hdr http.Header) *wire.Envelope {
	e := &wire.Envelope{Method: req.Method, Path: req.URL.Path, Status: status, Stream: stream,
		ConnectionID: req.Header.Get(HeaderConnectionID), SessionID: req.Header.Get(HeaderSessionID)}
	if hdr != nil && stream == wire.StreamPOST {
		e.Headers = envelopeHeaders(hdr)
	} else if hdr != nil {
		e.Headers = responseHeaders(hdr, req.Header)
		if e.ConnectionID == "" {
			e.ConnectionID = hdr.Get(HeaderConnectionID) // initialize's reply names it
		}
	}
	return e
}

// newRequest builds a request carrying the connection and, when given,
// the session.
func (h *httpBridge) newRequest(method string, body []byte, sessionID string) *http.Request {
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
		req.Header.Set(HeaderSessionID, connID)
	case connID != "":
		req.Header.Set(HeaderConnectionID, connID)
		if sessionID != "" {
			req.Header.Set(HeaderSessionID, sessionID)
		}
	}
	return req
}

// send POSTs one editor message and handles the immediate answer.
func (h *httpBridge) send(line []byte) error {
	m := wire.Classify(line)
	sid := h.learnClient(&m)
	req := h.newRequest(http.MethodPost, line, sid)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.record(connectConn, wire.DirClient, line, 0, h.envelope(req, wire.StreamPOST, 0, req.Header))
	resp, err := h.client.Do(req)
	if err != nil && h.needsConnection() {
		return unreachable(h.url, err)
	}
	if err != nil {
		return lostf("POST to %s failed: %v", h.url, err)
	}
	if h.needsConnection() {
		h.adoptConnection(resp.Header)
	}
	switch {
	case isEventStream(resp.Header.Get("Content-Type")):
		h.streams.Add(1)
		go h.readStream(req, resp, wire.StreamPOSTSSE, "") // POST stream reader: ends with the response
		return h.afterInitialize(&m)
	case resp.StatusCode < 300 && isJSON(resp.Header.Get("Content-Type")):
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return lostf("reading the reply to a POST: %v", err)
		}
		h.record(connectConn, wire.DirAgent, body, 0, h.envelope(req, wire.StreamPOSTReply, resp.StatusCode, resp.Header))
		if err := h.afterInitialize(&m); err != nil {
			return err
		}
		return h.deliver(body)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h.record(connectConn, wire.DirAgent, body, 0, h.envelope(req, wire.StreamHTTPControl, resp.StatusCode, resp.Header))
	if resp.StatusCode < 300 {
		return h.afterLoad(&m)
	}
	if h.needsConnection() && (resp.StatusCode == http.StatusNotFound || resp.StatusCode >= 500) {
		return refusedAtStart(h.url, resp.StatusCode, string(bytes.TrimSpace(body)))
	}
	return h.refused(&m, resp.StatusCode, body)
}

// refused handles an error status: the connection is gone (404, 5xx) or
// this one message was refused, which the editor learns as a JSON-RPC
// error when it was a request (it would wait forever otherwise).
func (h *httpBridge) refused(m *wire.Message, status int, body []byte) error {
	text := fmt.Sprintf("the server answered %d %s: %s", status, http.StatusText(status), bytes.TrimSpace(body))
	if status == http.StatusNotFound || status >= 500 {
		return lostf("%s", text)
	}
	h.opts.Warn("acpscope connect: " + text)
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

func (h *httpBridge) needsConnection() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.connID == ""
}

// adoptConnection learns the connection id from a response: the RFD's
// Acp-Connection-Id, or goose's older Acp-Session-Id.
func (h *httpBridge) adoptConnection(hdr http.Header) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id := hdr.Get(HeaderConnectionID); id != "" {
		h.connID = id
	} else if id := hdr.Get(HeaderSessionID); id != "" {
		h.connID, h.goose = id, true
	}
}

// afterInitialize opens the connection-scoped stream once the connection
// exists (RFD dialect), before the initialize reply reaches the editor.
func (h *httpBridge) afterInitialize(m *wire.Message) error {
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

// afterLoad opens a session's stream as soon as session/load or
// session/resume is accepted, so the history the agent replays before it
// answers streams live rather than waiting in the server's buffer.
func (h *httpBridge) afterLoad(m *wire.Message) error {
	if m.Kind != wire.KindRequest || (m.Method != "session/load" && m.Method != "session/resume") || m.SessionID == "" {
		return nil
	}
	h.mu.Lock()
	ok := !h.goose && h.connID != "" && !h.open[m.SessionID]
	h.open[m.SessionID] = true
	h.mu.Unlock()
	if !ok {
		return nil
	}
	return h.openStream(m.SessionID)
}

// openStream opens a GET stream (the connection's when sessionID is "")
// and starts its reader.
func (h *httpBridge) openStream(sessionID string) error {
	req := h.newRequest(http.MethodGet, nil, sessionID)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		return lostf("opening the event stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header.Get("Content-Type")) {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.record(connectConn, wire.DirAgent, body, 0, h.envelope(req, wire.StreamHTTPControl, resp.StatusCode, resp.Header))
		if sessionID != "" {
			h.opts.Warn(fmt.Sprintf("acpscope connect: session %s stream refused: %d %s", sessionID, resp.StatusCode, bytes.TrimSpace(body)))
			return nil
		}
		return lostf("the server refused the event stream: %d %s", resp.StatusCode, bytes.TrimSpace(body))
	}
	h.record(connectConn, wire.DirAgent, nil, 0, h.envelope(req, wire.StreamHTTPControl, resp.StatusCode, resp.Header))
	stream := wire.StreamConnection
	if sessionID != "" {
		stream = wire.StreamSession
	}
	h.streams.Add(1)
	go h.readStream(req, resp, stream, sessionID) // GET stream reader: ends with the stream
	return nil
}

// readStream delivers each event of an SSE response to the editor. The
// connection stream ending while stdin is open means the server is gone.
func (h *httpBridge) readStream(req *http.Request, resp *http.Response, stream, sessionID string) {
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
		h.record(connectConn, wire.DirAgent, e.Data, 0, env)
		if id, err := strconv.ParseUint(e.ID, 10, 64); ordered && err == nil {
			failed = h.order.push(id, e.Data)
			return
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
}

// deliver passes one agent message to the editor, first opening the
// stream of a session it reveals, so nothing of that session is missed.
func (h *httpBridge) deliver(msg []byte) error {
	m := wire.Classify(msg)
	if sid := h.learnAgent(&m); sid != "" {
		if err := h.openStream(sid); err != nil {
			return err
		}
	}
	return h.emit(msg)
}

// learnClient notes a client message and returns the session its POST
// belongs to (for Acp-Session-Id).
func (h *httpBridge) learnClient(m *wire.Message) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch m.Kind {
	case wire.KindRequest:
		h.reqs[string(m.ID)] = clientReq{method: m.Method, sessionID: m.SessionID}
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
func (h *httpBridge) learnAgent(m *wire.Message) string {
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
func (h *httpBridge) deleteConnection() {
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
	h.record(connectConn, wire.DirAgent, body, 0, h.envelope(req, wire.StreamHTTPControl, resp.StatusCode, resp.Header))
}
