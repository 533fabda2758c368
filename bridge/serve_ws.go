package bridge

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// wsSink is the agent→client side of a WebSocket connection: the stdout
// reader writes through it once the upgrade is done.
type wsSink struct {
	mu     sync.Mutex
	ws     *websocket.Conn
	watch  *acphttp.PeerWatch // set with ws: reads and writes go through it
	ready  chan struct{}      // closed once ws is set, or the upgrade failed
	before func(msg []byte)

	closeOnce sync.Once // one close frame, whoever sends it first
}

// closeWith sends the close frame (the first caller's code and reason
// win) and closes the socket.
func (k *wsSink) closeWith(code int, reason string) {
	k.closeOnce.Do(func() {
		k.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(acphttp.WSControlWait))
		k.ws.Close()
	})
}

var errWSNotOpen = errors.New("the WebSocket was never opened")

func (k *wsSink) write(msg []byte) error {
	<-k.ready
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ws == nil {
		return errWSNotOpen
	}
	k.before(msg) // recorded first: the client's answer must not precede it
	return k.watch.WriteMessage(websocket.TextMessage, msg)
}

// serveWS runs a connection over WebSocket: a new agent, the 101 with
// Acp-Connection-Id, then text messages both ways. Binary messages are
// recorded and ignored, as the RFD says.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !s.acquire() {
		s.refuseFull(w, r)
		return
	}
	sink := &wsSink{ready: make(chan struct{})}
	c, err := s.startConn(sink.write)
	if err != nil {
		s.answer(w, r, 0, http.StatusBadGateway, err.Error())
		return
	}
	defer c.unhold() // startConn's hold: a WebSocket is an open stream for its whole life
	h := http.Header{}
	h.Set(acphttp.HeaderConnectionID, c.id)
	setConnCookie(h, c.id)
	ws, err := s.upgrader.Upgrade(w, r, h)
	if err != nil {
		close(sink.ready) // the upgrader has answered the client
		c.close()
		return
	}
	env := func() *wire.Envelope {
		e := s.envelope(r, wire.StreamWebSocket, 0, nil)
		e.ConnectionID = c.id
		return e
	}
	sink.before = func(msg []byte) { s.opts.Recorder.Frame(c.num, wire.DirAgent, tap.Now(), msg, 0, env()) }
	e101 := s.envelope(r, wire.StreamHTTPControl, http.StatusSwitchingProtocols, h)
	e101.ConnectionID = c.id
	s.opts.Recorder.Frame(c.num, wire.DirAgent, tap.Now(), nil, 0, e101)
	sink.mu.Lock()
	sink.ws, sink.watch = ws, acphttp.WatchPeer(ws, s.opts.KeepAlive, c.done)
	sink.mu.Unlock()
	close(sink.ready)

	go func() { // closer: ends when the connection is torn down
		<-c.done
		sink.closeWith(websocket.CloseNormalClosure, "agent exited")
	}()
	defer c.close()
	for {
		size, more := s.relayWS(c, sink, env)
		acphttp.ReleaseMemory(size)
		if !more {
			return
		}
	}
}

// relayWS passes one client message to the agent; it returns the
// message's size and whether to go on. A message over the size limit
// closes the socket with 1009 and a reason naming the limit and the flag,
// and a client silent past the watch's wait with 1001; both are recorded
// like any close.
func (s *Server) relayWS(c *serveConn, sink *wsSink, env func() *wire.Envelope) (int, bool) {
	mt, msg, err := sink.watch.ReadMessage(s.opts.MaxMessageSize)
	switch {
	case errors.Is(err, acphttp.ErrTooBig):
		s.closeWS(c, sink, env, websocket.CloseMessageTooBig, acphttp.WSTooBigReason(s.opts.MaxMessageSize))
		return int(s.opts.MaxMessageSize), false
	case acphttp.Gone(err):
		s.closeWS(c, sink, env, websocket.CloseGoingAway, sink.watch.GoneReason())
		return len(msg), false
	case err != nil:
		return len(msg), false
	case mt == websocket.BinaryMessage:
		s.opts.Recorder.TakeFrame(c.num, wire.DirClient, tap.Now(), msg, wire.FlagBinary, env())
		return len(msg), true
	}
	s.opts.Recorder.TakeFrame(c.num, wire.DirClient, tap.Now(), msg, 0, env())
	return len(msg), c.send(msg) == nil
}

// closeWS records the close serve sends, then sends it.
func (s *Server) closeWS(c *serveConn, sink *wsSink, env func() *wire.Envelope, code int, reason string) {
	s.opts.Recorder.Frame(c.num, wire.DirAgent, tap.Now(), nil, 0, acphttp.WSCloseEnv(env(), code, reason))
	sink.closeWith(code, reason)
}
