package bridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/internal/tap"
	acp "github.com/acpscope/acpscope/protocol" // the test files declare a type named protocol
	"github.com/acpscope/acpscope/wire"
)

// connLevelMethods are the requests whose responses travel on the
// connection-scoped stream although they name a session: the client
// cannot have the session's stream before it knows the session.
var connLevelMethods = acp.ConnectionLevelMethods()

// serveConn is one client connection of serve: one agent process, its
// connection-scoped stream, one stream per session, and the routing
// state that sends each agent message to the right stream.
type serveConn struct {
	id    string
	num   uint32
	srv   *Server
	agent *agent.Process

	stdinMu sync.Mutex // one writer to the agent's stdin at a time

	mu        sync.Mutex
	gate      *orderGate
	seq       uint64 // numbers agent messages in stdout order
	eventID   atomic.Uint64
	conn      *outStream
	sessions  map[string]*outStream
	routes    map[string]string          // client request id → sessionId ("" = connection)
	agentReqs map[string]string          // agent request id → its sessionId
	loads     map[string]string          // client session/load, resume id → its sessionId
	awaited   map[string]*awaitedSession // sessions whose stream waits to be confirmed
	initID    string                     // id of the initialize answered on the POST
	initReply chan []byte
	toWS      func([]byte) error // set in WebSocket mode: every message goes here

	idleMu     sync.Mutex
	idle       *time.Timer // the idle reaper; nil when --idle-timeout is off
	busy       int         // holds: POSTs being handled, open streams
	lastActive time.Time   // when the last hold ended

	ic tap.Conn // the connection's interceptor; nil without one

	closeOnce sync.Once
	done      chan struct{} // closed when the connection is torn down
	readDone  chan struct{} // closed when the stdout reader ends
	errDone   chan struct{} // closed when the stderr reader ends
}

// newConnID returns an unguessable connection id.
func newConnID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startConn spawns the agent for a new connection, in a slot the caller
// has acquired, and starts reading its stdout and stderr. The connection
// comes held for the caller (unhold ends it): the request that opened it
// is not idleness, however long a busy machine takes to reach its next
// line.
func (s *Server) startConn(ws func([]byte) error) (*serveConn, error) {
	a, err := agent.Start(context.Background(), s.opts.Argv, s.opts.Agent)
	if err != nil {
		s.releaseSlot()
		err = agent.WithHint(err, agent.HintServe)
		s.warn(err.Error())
		return nil, err
	}
	gate := newOrderGate()
	c := &serveConn{
		id: newConnID(), num: s.nums.Fresh(), srv: s, agent: a, gate: gate,
		conn: newOutStream("", newStreamBudget(s.opts.StreamBuffer), gate), sessions: map[string]*outStream{},
		routes: map[string]string{}, agentReqs: map[string]string{},
		loads: map[string]string{}, awaited: map[string]*awaitedSession{},
		toWS: ws, done: make(chan struct{}), readDone: make(chan struct{}),
		errDone: make(chan struct{}),
		busy:    1, // the caller's hold, taken before the idle reaper is armed
	}
	if s.opts.Intercept != nil {
		c.ic = s.opts.Intercept.Open(c.num, &servePort{c: c, rec: s.messages})
	}
	added := s.addConn(c)
	c.startIdle()
	go c.readStdout() // stdout reader: ends at the agent's stdout EOF
	go c.readStderr() // stderr reader: ends at the agent's stderr EOF
	go func() {       // exit watcher: ends when the agent exits or the connection closes
		select {
		case <-a.Done():
			// What the agent wrote before exiting is routed first, unless
			// a process it left behind keeps its stdout open.
			waitClosed(c.readDone, a.Grace())
			c.close()
		case <-c.done:
		}
	}()
	if !added {
		c.close()
		return nil, errServerClosed
	}
	return c, nil
}

// waitClosed waits up to d for ch to close and reports whether it did.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// send writes one client message to the agent as one line. A body that
// spans lines (pretty-printed JSON) is compacted, because stdio framing
// cannot carry it otherwise; a single-line body goes unchanged. Neither
// copies a big body: it is written as it is, or compacted as it streams.
func (c *serveConn) send(msg []byte) error {
	msg = bytes.TrimRight(msg, "\r\n")
	if c.ic != nil {
		return c.ic.Message(wire.DirClient, tap.Now(), append([]byte(nil), msg...))
	}
	return c.sendNow(msg)
}

// sendNow writes msg to the agent's stdin.
func (c *serveConn) sendNow(msg []byte) error {
	c.stdinMu.Lock()
	defer c.stdinMu.Unlock()
	if err := writeLine(c.agent.Stdin, msg); err != nil {
		return fmt.Errorf("writing to the agent: %w", err)
	}
	return nil
}

// noteClientMessage learns routing from a client message before it goes
// to the agent: where the response to a request must go, and which
// sessions exist (session/load names one the agent will speak about).
func (c *serveConn) noteClientMessage(m *wire.Message) {
	if c.toWS != nil {
		return // one socket carries everything: nothing to route
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.Kind == wire.KindRequest {
		target := m.SessionID
		if connLevelMethods[m.Method] {
			target = ""
		}
		c.routes[string(m.ID)] = target
		if acp.ResumesSession(m.Method) {
			c.noteLoadLocked(m.ID, m.SessionID)
		}
	}
	if m.Kind == wire.KindResponse || m.Kind == wire.KindError {
		delete(c.agentReqs, string(m.ID))
	}
}

// answersSessionRequest reports the session of the agent request a
// client response answers ("" when none): such a response is a
// session-scoped POST.
func (c *serveConn) answersSessionRequest(id []byte) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.agentReqs[string(id)]
}

// sessionLocked returns the session's stream, creating it on first use.
func (c *serveConn) sessionLocked(id string) *outStream {
	if id == "" {
		return nil
	}
	st := c.sessions[id]
	if st == nil {
		st = newOutStream(id, c.conn.budget, c.gate) // the connection's streams share one bound
		c.sessions[id] = st
	}
	return st
}

// readStdout reads the agent's messages, one per line, with no size
// limit, and routes each.
func (c *serveConn) readStdout() {
	defer close(c.readDone)
	defer c.agent.Stdout.Close()
	r := bufio.NewReaderSize(c.agent.Stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if msg := bytes.TrimRight(line, "\r\n"); len(msg) > 0 {
			c.route(msg)
		}
		if err != nil {
			if c.ic != nil {
				c.ic.End(wire.DirAgent) // what is held for the client goes out first
			}
			return
		}
	}
}

// route passes one agent message on: to the router, or through the
// interceptor.
func (c *serveConn) route(msg []byte) {
	if c.ic != nil {
		_ = c.ic.Message(wire.DirAgent, tap.Now(), msg)
		return
	}
	c.routeNow(msg)
}

// routeNow delivers one agent message: to the initialize POST waiting for
// it, to the WebSocket, or to the connection or session stream.
func (c *serveConn) routeNow(msg []byte) {
	m := wire.Classify(msg)
	if c.toWS != nil {
		if c.toWS(msg) != nil {
			c.close()
		}
		return
	}
	c.mu.Lock()
	var st, failed *outStream
	settle := false
	switch m.Kind {
	case wire.KindResponse, wire.KindError:
		id := string(m.ID)
		if c.initReply != nil && id == c.initID {
			c.initReply <- append([]byte(nil), msg...)
			c.initReply = nil
			c.mu.Unlock()
			return
		}
		target, known := c.routes[id]
		delete(c.routes, id)
		if sid := wire.StringMember(m.Result, "sessionId"); sid != "" {
			c.sessionLocked(sid) // session/new, session/fork: a new session
		}
		_, settle = c.loads[id] // a load's answer follows its history
		failed = c.resolveLoadLocked(&m)
		if known && target != "" {
			st = c.sessionLocked(target)
		}
	case wire.KindRequest, wire.KindNotification:
		if m.Kind == wire.KindRequest {
			c.agentReqs[string(m.ID)] = m.SessionID
		}
		st = c.sessionLocked(m.SessionID)
	}
	if st == nil {
		st = c.conn
	}
	c.seq++
	seq := c.seq
	if failed != nil {
		c.seq++ // the failed session's stream ends after this answer is written
	}
	c.mu.Unlock()
	if st.pushItem(queued{seq: seq, msg: msg, settle: settle}) == pushFull {
		c.dropped(st, msg)
	}
	if failed != nil {
		failed.finish(seq + 1)
	}
}

// dropped records and says that msg was dropped because its stream had
// no client and the connection's streams hold their bound. The capture keeps
// the message marked as never delivered, so whoever reads it later sees
// the loss, not only whoever watched stderr.
func (c *serveConn) dropped(st *outStream, msg []byte) {
	env := &wire.Envelope{Stream: wire.StreamConnection, ConnectionID: c.id}
	what := "the connection's stream"
	if st.session != "" {
		env.Stream, env.SessionID = wire.StreamSession, st.session
		what = "session " + st.session + "'s stream"
	}
	b := st.budget
	note := fmt.Sprintf("no client had opened %s, and the connection's streams held %s of their %s",
		what, human.Size(b.held.Load()), human.Size(int64(b.limit)))
	c.srv.warn(fmt.Sprintf("connection %s: dropped a %s agent message (recorded): %s", c.id, human.Size(int64(len(msg))), note))
	c.srv.opts.Recorder.Altered(c.num, wire.DirAgent, tap.Now(), msg, env, &acp.Fault{
		Action: acp.ActionDrop, Stage: acp.StageDropped, By: acp.ByServe, Note: note})
}

// nextEventID numbers SSE events across the connection's streams; the
// order gate makes the numbers follow the write order.
func (c *serveConn) nextEventID() uint64 { return c.eventID.Add(1) }

// awaitInit registers id as the initialize whose reply the POST handler
// waits for.
func (c *serveConn) awaitInit(id []byte) chan []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.initID = string(id)
	c.initReply = make(chan []byte, 1)
	return c.initReply
}

// readStderr passes the agent's stderr to serve's stderr, line by line so
// agents do not interleave mid-line, and records it.
func (c *serveConn) readStderr() {
	defer close(c.errDone)
	defer c.agent.Stderr.Close()
	r := bufio.NewReaderSize(c.agent.Stderr, 16<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			c.srv.stderrLine(line)
			c.srv.opts.Recorder.Chunk(c.num, capture.StreamStderr, tap.Now(), line)
		}
		if err != nil {
			c.srv.opts.Recorder.EndStream(c.num, capture.StreamStderr, tap.Now())
			return
		}
	}
}

// close tears the connection down: streams end, the agent is stopped
// through the shutdown ladder. It is idempotent and does not wait.
func (c *serveConn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.stopIdle()
		c.srv.removeConn(c)
		c.mu.Lock()
		c.stopWaitsLocked()
		c.conn.close()
		for _, st := range c.sessions {
			st.close()
		}
		if c.initReply != nil {
			close(c.initReply)
			c.initReply = nil
		}
		c.mu.Unlock()
		if c.ic != nil {
			go c.ic.End(wire.DirClient) // releases what is held for the agent; its stdin may be gone
		}
		go c.stop() // ladder: ends when the agent has exited and its output is drained
	})
}

// stop runs the shutdown ladder, waits for both readers to reach EOF and
// frees the connection's slot. Processes the agent left behind in its
// group still holding the pipes get SIGKILL after a grace, and our ends
// are closed, so the readers end either way.
func (c *serveConn) stop() {
	defer c.srv.releaseSlot()
	a := c.agent
	a.Shutdown()
	if waitClosed(c.readDone, a.Grace()) && waitClosed(c.errDone, a.Grace()) {
		return
	}
	a.Kill()
	a.Stdout.Close() // unblocks a reader: os.Pipe ends are pollable
	a.Stderr.Close()
	<-c.readDone
	<-c.errDone
}
