package bridge

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
)

// DefaultMaxConns caps serve's connections, which is its agent processes:
// more than a team of editors shares one serve, few enough that real
// agents (node or python, 100–300 MB each) still fit one machine.
const DefaultMaxConns = 64

// DefaultIdleTimeout is how long serve keeps a connection that has no
// stream open, sends nothing and is not deleted. A real client opens its
// connection stream right after initialize; one that never does holds an
// agent nobody can talk to. Five minutes leaves a slow client (or one
// paused in a debugger) plenty of time.
const DefaultIdleTimeout = 5 * time.Minute

// errServerClosed refuses a connection that Close overtook.
var errServerClosed = errors.New("serve is shutting down")

// acquire takes a connection slot; it reports false when MaxConns agents
// are running. A slot is held until the agent has exited and its output
// is drained, so the cap bounds processes, not just entries in a map.
func (s *Server) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || (s.opts.MaxConns > 0 && s.agents >= s.opts.MaxConns) {
		return false
	}
	s.agents++
	s.running.Add(1)
	return true
}

func (s *Server) releaseSlot() {
	s.mu.Lock()
	s.agents--
	s.mu.Unlock()
	s.running.Done()
}

// Agents returns how many agent processes serve has running or still
// stopping.
func (s *Server) Agents() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents
}

// refuseFull answers an initialize or WebSocket beyond the cap, or one
// that came while serve shuts down.
func (s *Server) refuseFull(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(int(acphttp.RetryAfter/time.Second)))
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.answer(w, r, 0, http.StatusServiceUnavailable, errServerClosed.Error())
		return
	}
	s.answer(w, r, 0, http.StatusServiceUnavailable, fmt.Sprintf(
		"connections at the --max-connections cap (%d); retry later, end idle ones with DELETE, or raise --max-connections",
		s.opts.MaxConns))
}

// startIdle arms the idle reaper of a new connection.
func (c *serveConn) startIdle() {
	d := c.srv.opts.IdleTimeout
	if d <= 0 {
		return
	}
	c.idleMu.Lock()
	defer c.idleMu.Unlock()
	c.lastActive = time.Now()
	c.idle = time.AfterFunc(d, c.reapIfIdle) // idle reaper: runs once per period, ends at once
}

// hold marks the connection busy while a POST is handled or a stream or
// WebSocket is open: a busy connection is never idle.
func (c *serveConn) hold() {
	c.idleMu.Lock()
	defer c.idleMu.Unlock()
	c.busy++
}

// unhold ends a hold; the idle period starts anew when the last one ends.
func (c *serveConn) unhold() {
	c.idleMu.Lock()
	defer c.idleMu.Unlock()
	c.busy--
	c.lastActive = time.Now()
	if c.busy == 0 && c.idle != nil && !c.closing() {
		c.idle.Reset(c.srv.opts.IdleTimeout)
	}
}

// closing reports whether the connection is being torn down.
func (c *serveConn) closing() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// reapIfIdle runs when the idle timer fires: a connection that has been
// idle for the whole period is torn down, its agent stopped through the
// shutdown ladder, and serve says so once.
func (c *serveConn) reapIfIdle() {
	if c.closing() {
		return
	}
	d := c.srv.opts.IdleTimeout
	c.idleMu.Lock()
	busy, quiet := c.busy, time.Since(c.lastActive)
	if busy == 0 && quiet < d {
		c.idle.Reset(d - quiet) // re-armed by a late unhold: wait the rest
	}
	c.idleMu.Unlock()
	if busy > 0 || quiet < d {
		return // unhold re-arms the timer when the connection goes quiet
	}
	c.srv.warn(fmt.Sprintf("connection %s idle for %s (no stream open, nothing sent, not deleted): stopping its agent; --idle-timeout sets the period",
		c.id, d.Round(time.Millisecond)))
	c.close()
}

// stopIdle disarms the reaper of a connection being torn down.
func (c *serveConn) stopIdle() {
	c.idleMu.Lock()
	defer c.idleMu.Unlock()
	if c.idle != nil {
		c.idle.Stop()
	}
}
