package bridge

import (
	"fmt"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// DefaultSessionWait is how long a session stream opened before anything
// named its session waits for a session/load, session/resume or
// session/new to name it. The RFD's resume flow opens the stream first
// and POSTs the load right after, so this only has to outlast one round
// trip; it bounds what a GET for a session that never comes holds.
const DefaultSessionWait = 30 * time.Second

// maxAwaitedSessions caps the streams of one connection that wait for
// their session with no load in flight; a GET beyond it is answered 404,
// as the RFD answers unknown sessions.
const maxAwaitedSessions = 16

// awaitedSession is a session whose stream exists before the session is
// confirmed: a GET opened it first (the RFD's resume flow), or a load or
// resume named a session this connection had not seen. It is confirmed
// by a successful load or resume answer, or a session/new or fork result
// naming it, and dropped when its loads fail or, with none in flight,
// when its wait runs out.
type awaitedSession struct {
	timer *time.Timer // runs out the wait while no load is in flight
	loads int         // session/load or session/resume requests in flight
}

func (s *Server) sessionWait() time.Duration {
	if s.opts.SessionWait > 0 {
		return s.opts.SessionWait
	}
	return DefaultSessionWait
}

// streamFor returns the stream for a GET: the connection's, a known
// session's, or, for a session nothing has named yet, a new one that
// waits for it. It returns nil when too many streams already wait.
func (c *serveConn) streamFor(sessionID string) *outStream {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sessionID == "" {
		return c.conn
	}
	if st := c.sessions[sessionID]; st != nil {
		return st
	}
	idle := 0
	for _, a := range c.awaited {
		if a.loads == 0 {
			idle++
		}
	}
	if idle >= maxAwaitedSessions {
		return nil
	}
	a := &awaitedSession{}
	c.awaited[sessionID] = a
	a.timer = time.AfterFunc(c.srv.sessionWait(), func() { c.waitRanOut(sessionID, a) }) // wait timer: fires once
	return c.sessionLocked(sessionID)
}

// noteLoadLocked follows a session/load or session/resume request: until
// its answer, the session's stream waits for it rather than for a timer.
func (c *serveConn) noteLoadLocked(id []byte, sessionID string) {
	if sessionID == "" {
		return
	}
	c.loads[string(id)] = sessionID
	a := c.awaited[sessionID]
	if a == nil && c.sessions[sessionID] != nil {
		return // a session this connection already has
	}
	if a == nil {
		a = &awaitedSession{}
		c.awaited[sessionID] = a
		c.sessionLocked(sessionID)
	}
	a.loads++
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

// resolveLoadLocked learns from an agent response whether a session waiting
// to be confirmed exists. It returns the stream to end, if the session
// failed to load, for route to end after the response has been written.
func (c *serveConn) resolveLoadLocked(m *wire.Message) *outStream {
	if sid := wire.StringMember(m.Result, "sessionId"); sid != "" {
		c.confirmLocked(sid) // session/new, session/fork
	}
	sid, ok := c.loads[string(m.ID)]
	if !ok {
		return nil
	}
	delete(c.loads, string(m.ID))
	a := c.awaited[sid]
	if a == nil {
		return nil
	}
	a.loads--
	if m.Kind == wire.KindResponse {
		c.confirmLocked(sid)
		return nil
	}
	if a.loads > 0 {
		return nil
	}
	st := c.sessions[sid]
	delete(c.awaited, sid)
	delete(c.sessions, sid)
	return st
}

func (c *serveConn) confirmLocked(sessionID string) {
	if a := c.awaited[sessionID]; a != nil {
		if a.timer != nil {
			a.timer.Stop()
		}
		delete(c.awaited, sessionID)
	}
}

// waitRanOut ends the stream of a session nothing named in time.
func (c *serveConn) waitRanOut(sessionID string, a *awaitedSession) {
	c.mu.Lock()
	if c.awaited[sessionID] != a || a.loads > 0 || a.timer == nil {
		c.mu.Unlock()
		return
	}
	st := c.sessions[sessionID]
	delete(c.awaited, sessionID)
	delete(c.sessions, sessionID)
	c.mu.Unlock()
	if st != nil {
		st.close()
	}
	c.srv.warn(fmt.Sprintf("connection %s: ended the stream of session %s: no session/load, session/resume or session/new named it within %s", c.id, sessionID, c.srv.sessionWait()))
}

// stopWaitsLocked stops every wait timer as the connection ends.
func (c *serveConn) stopWaitsLocked() {
	for _, a := range c.awaited {
		if a.timer != nil {
			a.timer.Stop()
		}
	}
}
