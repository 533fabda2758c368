package proxy

import (
	"sync"

	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// Interception on a proxied WebSocket (HTTPProxyOptions.Intercept; for
// Streamable HTTP see http_intercept.go), where each text message is one
// ACP message each way: a message read from one socket goes to the
// interceptor instead of the other socket, and what it delivers the
// wsPort writes and records, with the socket's envelope. Without an
// interceptor none of this runs.

// wsPort is the tap.Port of one proxied WebSocket.
type wsPort struct {
	w             *wsPipe
	client, agent *lockedWS
}

// lockedWS serializes writes of whole messages to one socket: under
// interception, a socket is written by its pump and by deliveries from
// the other direction (answers in the agent's place, injections).
type lockedWS struct {
	mu sync.Mutex
	ws *websocket.Conn
}

func (l *lockedWS) write(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ws.WriteMessage(websocket.TextMessage, msg)
}

func (p *wsPort) Deliver(dir wire.Dir, msg []byte, f *protocol.Fault) error {
	if f == nil {
		p.w.rec.Frame(p.w.conn, dir, tap.Now(), msg, 0, p.w.msgEnv)
	} else {
		p.w.rec.Altered(p.w.conn, dir, tap.Now(), msg, p.w.env(), f)
	}
	if dir == wire.DirClient {
		return p.agent.write(msg)
	}
	return p.client.write(msg)
}

func (p *wsPort) Record(dir wire.Dir, t int64, msg []byte, f *protocol.Fault) {
	p.w.rec.Altered(p.w.conn, dir, t, msg, p.w.env(), f)
}

// Close ends both legs, as if the peers had hung up.
func (p *wsPort) Close() {
	p.client.ws.Close()
	p.agent.ws.Close()
}

// Kill: the proxy starts no agent; a rule's kill ends the connection.
func (p *wsPort) Kill() { p.Close() }

// intercept opens the pipe's connection on ic; the pumps then hand text
// messages to it.
func (w *wsPipe) intercept(ic tap.Interceptor, client, agent *websocket.Conn) {
	w.locks = map[*websocket.Conn]*lockedWS{client: {ws: client}, agent: {ws: agent}}
	w.ic = ic.Open(w.conn, &wsPort{w: w, client: w.locks[client], agent: w.locks[agent]})
}
