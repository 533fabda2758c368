package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// wsHandshakeHeaders are set by the WebSocket library itself on each leg,
// so they are not copied from one leg to the other.
var wsHandshakeHeaders = []string{
	"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version",
	"Sec-Websocket-Extensions", "Sec-Websocket-Protocol", "Sec-Websocket-Accept",
	"Host", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding",
	"Proxy-Authorization",
}

func withoutHandshakeHeaders(h http.Header) http.Header {
	out := h.Clone()
	for _, name := range wsHandshakeHeaders {
		out.Del(name)
	}
	return out
}

// serveWebSocket relays a WebSocket on our endpoint: byte for byte
// (ws_upgrade.go, ws_relay.go), or message by message under
// interception, which holds and rewrites whole messages.
func (p *HTTPProxy) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if p.intercept != nil {
		p.serveWebSocketMessages(w, r)
		return
	}
	p.serveWebSocketBytes(w, r)
}

// wsEnvelope makes the envelopes of a WebSocket's records: the upgrade
// request's method, path, protocol and Acp-* headers, with the stream,
// status and headers given.
func wsEnvelope(r *http.Request) func(stream string, status int, h http.Header) *wire.Envelope {
	return func(stream string, status int, h http.Header) *wire.Envelope {
		e := &wire.Envelope{Method: r.Method, Path: r.URL.Path, Proto: r.Proto, Status: status, Stream: stream,
			ConnectionID: r.Header.Get(acphttp.HeaderConnectionID), SessionID: r.Header.Get(acphttp.HeaderSessionID)}
		if h != nil {
			e.Headers = acphttp.EnvelopeHeaders(h)
		}
		return e
	}
}

// serveWebSocketMessages joins a client WebSocket to an upstream one,
// message by message: dial the upstream first, so its 101 headers
// (Acp-Connection-Id, Set-Cookie) and any refusal reach the client as the
// upstream sent them.
func (p *HTTPProxy) serveWebSocketMessages(w http.ResponseWriter, r *http.Request) {
	conn := p.conns.Fresh()
	env := wsEnvelope(r)
	d := *p.dialer
	d.Subprotocols = websocket.Subprotocols(r)
	h := withoutHandshakeHeaders(r.Header)
	p.forUpstream(h, r)
	up, resp, err := d.DialContext(r.Context(), p.wsURL(r), h)
	if err != nil {
		p.refuseWebSocket(w, r, conn, resp, err, env)
		return
	}
	respHeader := withoutHandshakeHeaders(resp.Header)
	connID := resp.Header.Get(acphttp.HeaderConnectionID)
	p.conns.Bind(connID, conn)
	u := p.upgrader
	if sp := up.Subprotocol(); sp != "" {
		u.Subprotocols = []string{sp}
	}
	down, err := u.Upgrade(w, r, respHeader)
	if err != nil {
		up.Close() // Upgrade has answered the client with an error already
		return
	}
	p.recordSwitch(conn, env, resp.Header, connID)
	if !p.trackWS(up, down) {
		return
	}
	defer p.untrackWS(up, down)
	pipe := &wsPipe{rec: p.rec, conn: conn, limit: p.maxMessage, env: wsStreamEnvelope(env, connID)}
	pipe.msgEnv = pipe.env()
	if p.intercept != nil {
		pipe.intercept(p.intercept, down, up)
	}
	pipe.run(down, up)
}

// recordSwitch records the upstream's 101, under the connection id it
// gave when the request had none.
func (p *HTTPProxy) recordSwitch(conn uint32, env func(string, int, http.Header) *wire.Envelope, h http.Header, connID string) {
	e := env(wire.StreamHTTPControl, http.StatusSwitchingProtocols, h)
	if e.ConnectionID == "" {
		e.ConnectionID = connID
	}
	p.rec.Frame(conn, wire.DirAgent, tap.Now(), nil, 0, e)
}

// wsStreamEnvelope makes the envelopes of a socket's messages and
// closes, under the connection id the 101 gave when the request had
// none.
func wsStreamEnvelope(env func(string, int, http.Header) *wire.Envelope, connID string) func() *wire.Envelope {
	return func() *wire.Envelope {
		e := env(wire.StreamWebSocket, 0, nil)
		if e.ConnectionID == "" {
			e.ConnectionID = connID
		}
		return e
	}
}

// refuseWebSocket passes on the upstream's refusal (its status, headers
// and body) or answers 502 when it could not be reached.
func (p *HTTPProxy) refuseWebSocket(w http.ResponseWriter, r *http.Request, conn uint32, resp *http.Response, err error,
	env func(string, int, http.Header) *wire.Envelope) {
	if resp == nil {
		msg := fmt.Sprintf("acpscope: %s\n", describeUpstreamError(p.upstream, err))
		http.Error(w, msg[:len(msg)-1], http.StatusBadGateway)
		p.rec.Frame(conn, wire.DirAgent, tap.Now(), []byte(msg), 0, env(wire.StreamHTTPControl, http.StatusBadGateway, w.Header()))
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, p.maxMessage))
	h := withoutHandshakeHeaders(resp.Header)
	h.Del("Content-Length") // what was read of the body decides it
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
	p.rec.Frame(conn, wire.DirAgent, tap.Now(), body, 0, env(wire.StreamHTTPControl, resp.StatusCode, resp.Header))
}

// wsURL is the upstream WebSocket URL for our endpoint.
func (p *HTTPProxy) wsURL(r *http.Request) string {
	u := *p.upstream
	u.Scheme = "ws"
	if p.upstream.Scheme == "https" {
		u.Scheme = "wss"
	}
	u.RawQuery = joinQuery(p.upstream.RawQuery, r.URL.RawQuery)
	return (&u).String()
}

// trackWS notes a WebSocket's two sockets open, for Close, and reports
// whether the proxy is still open; once Close has run it closes them
// instead, so a socket that was switching protocols while the proxy
// closed does not outlive it.
func (p *HTTPProxy) trackWS(a, b io.Closer) bool {
	p.wsMu.Lock()
	defer p.wsMu.Unlock()
	if p.wsClosed {
		a.Close()
		b.Close()
		return false
	}
	p.wsConns[a]++
	p.wsConns[b]++
	return true
}

// untrackWS forgets a WebSocket's sockets once its relay has ended.
func (p *HTTPProxy) untrackWS(a, b io.Closer) {
	p.wsMu.Lock()
	defer p.wsMu.Unlock()
	delete(p.wsConns, a)
	delete(p.wsConns, b)
}

// wsPipe copies messages between two WebSockets and records them.
type wsPipe struct {
	rec   tap.Recorder
	conn  uint32
	limit int64                 // --max-message-size
	env   func() *wire.Envelope // a fresh envelope, for the caller to complete
	// msgEnv is the envelope every message shares: built once, and never
	// changed (the capture keeps it as it is).
	msgEnv *wire.Envelope
	// Under interception: the connection's interceptor, and each
	// socket's write lock.
	ic    tap.Conn
	locks map[*websocket.Conn]*lockedWS
}

// run copies client→agent and agent→client until both directions have
// closed or one fails; it closes both sockets before returning.
func (w *wsPipe) run(client, agent *websocket.Conn) {
	errc := make(chan error, 2)
	go w.pump(client, agent, wire.DirClient, errc) // client→agent pump
	go w.pump(agent, client, wire.DirAgent, errc)  // agent→client pump
	first := <-errc
	if !isClose(first) {
		client.Close() // a broken leg: unblock the other pump
		agent.Close()
	}
	timer := time.NewTimer(acphttp.WSControlWait)
	defer timer.Stop()
	select {
	case <-errc:
	case <-timer.C: // the other side never answered the close
	}
	client.Close()
	agent.Close()
}

// pump forwards messages from one socket to the other, then forwards the
// close (code and reason as received). Pings and pongs are passed on
// rather than answered here, so each end sees the other's.
func (w *wsPipe) pump(from, to *websocket.Conn, dir wire.Dir, errc chan<- error) {
	from.SetPingHandler(func(data string) error {
		return ignoreClosed(to.WriteControl(websocket.PingMessage, []byte(data), time.Now().Add(acphttp.WSControlWait)))
	})
	from.SetPongHandler(func(data string) error {
		return ignoreClosed(to.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(acphttp.WSControlWait)))
	})
	from.SetCloseHandler(func(int, string) error { return nil }) // forwarded below instead
	for {
		size, err := w.relay(from, to, dir)
		acphttp.ReleaseMemory(size)
		if err != nil {
			if w.ic != nil {
				w.ic.End(dir) // what is held in this direction goes first, if it still can
			}
			errc <- err
			return
		}
	}
}

// relay passes one message on and returns its size. A message over the
// limit is not passed on: both sides get a 1009 close naming the limit
// and the flag, each recorded.
func (w *wsPipe) relay(from, to *websocket.Conn, dir wire.Dir) (int, error) {
	mt, msg, err := acphttp.ReadMessage(from, w.limit)
	switch {
	case errors.Is(err, acphttp.ErrTooBig):
		w.refuseTooBig(from, to, dir)
		return int(w.limit), err
	case err != nil:
		w.forwardClose(to, dir, err)
		return len(msg), err
	}
	var flags wire.Flags
	if mt == websocket.BinaryMessage {
		flags |= wire.FlagBinary
	}
	if w.ic != nil && mt == websocket.TextMessage {
		return len(msg), w.ic.Message(dir, tap.Now(), msg)
	}
	// Recorded before it is passed on: the answer it provokes on the
	// other pump must never be recorded first. The capture keeps msg,
	// which nothing changes after.
	w.rec.TakeFrame(w.conn, dir, tap.Now(), msg, flags, w.msgEnv)
	if l := w.locks[to]; l != nil { // under interception others write to it too
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	return len(msg), to.WriteMessage(mt, msg)
}

// refuseTooBig closes both legs with 1009 after a message over the limit
// came from one of them, and records each close in the direction it
// travels.
func (w *wsPipe) refuseTooBig(from, to *websocket.Conn, dir wire.Dir) {
	reason := acphttp.WSTooBigReason(w.limit)
	payload := websocket.FormatCloseMessage(websocket.CloseMessageTooBig, reason)
	deadline := time.Now().Add(acphttp.WSControlWait)
	w.rec.Frame(w.conn, dir.Reverse(), tap.Now(), nil, 0, acphttp.WSCloseEnv(w.env(), websocket.CloseMessageTooBig, reason))
	from.WriteControl(websocket.CloseMessage, payload, deadline)
	w.rec.Frame(w.conn, dir, tap.Now(), nil, 0, acphttp.WSCloseEnv(w.env(), websocket.CloseMessageTooBig, reason))
	to.WriteControl(websocket.CloseMessage, payload, deadline)
}

// forwardClose passes a close frame on and records it; a broken read is
// passed on as 1006-like silence (the socket is closed by run).
func (w *wsPipe) forwardClose(to *websocket.Conn, dir wire.Dir, err error) {
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		return
	}
	payload := []byte{}
	if ce.Code != websocket.CloseNoStatusReceived {
		payload = websocket.FormatCloseMessage(ce.Code, ce.Text)
	}
	to.WriteControl(websocket.CloseMessage, payload, time.Now().Add(acphttp.WSControlWait))
	w.rec.Frame(w.conn, dir, tap.Now(), nil, 0, acphttp.WSCloseEnv(w.env(), ce.Code, ce.Text))
}

func isClose(err error) bool {
	var ce *websocket.CloseError
	return errors.As(err, &ce)
}

func ignoreClosed(err error) error {
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}
