package bridge

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
)

// DefaultDisconnectGrace is how long serve keeps a connection whose
// connection-scoped GET stream has ended, waiting for the client to open
// it again, before stopping its agent.
const DefaultDisconnectGrace = 10 * time.Second

// servePOST carries one client message to the agent (RFD "POST /acp"),
// then gives a big body's memory back.
func (s *Server) servePOST(w http.ResponseWriter, r *http.Request) {
	acphttp.ReleaseMemory(s.handlePOST(w, r))
}

// handlePOST does servePOST's work and returns the body's size. The body
// is read once, into a buffer of its size, and handed to the capture as
// it is: the only copy is the agent's.
func (s *Server) handlePOST(w http.ResponseWriter, r *http.Request) int {
	connID := r.Header.Get(acphttp.HeaderConnectionID)
	c := s.lookup(connID)
	num := uint32(0)
	if c != nil {
		num = c.num
		c.hold() // a slow upload is not idleness
		defer c.unhold()
	}
	body, err := acphttp.ReadBody(r, s.opts.MaxMessageSize)
	switch {
	case errors.Is(err, acphttp.ErrTooBig):
		s.answer(w, r, num, http.StatusRequestEntityTooLarge, acphttp.TooBigText(r.ContentLength, s.opts.MaxMessageSize))
		if r.ContentLength > 0 {
			return 0 // refused unread
		}
		return int(s.opts.MaxMessageSize)
	case err != nil:
		s.recordPOST(num, r, body, wire.FlagPartial)
		return len(body) // the client went away mid-body
	}
	if !isJSONMediaType(r.Header.Get("Content-Type")) {
		s.recordPOST(num, r, body, 0)
		s.answer(w, r, num, http.StatusUnsupportedMediaType, "POST needs Content-Type: application/json")
		return len(body)
	}
	m := wire.Classify(body)
	if connID == "" && m.Kind == wire.KindRequest && m.Method == "initialize" {
		s.initialize(w, r, body, &m)
		return len(body)
	}
	s.recordPOST(num, r, body, 0)
	s.deliver(w, r, c, body, &m)
	return len(body)
}

// recordPOST records a client's POST body, which nothing changes after.
func (s *Server) recordPOST(conn uint32, r *http.Request, body []byte, flags wire.Flags) {
	s.opts.Recorder.TakeFrame(conn, wire.DirClient, tap.Now(), body, flags, s.envelope(r, wire.StreamPOST, 0, r.Header))
}

// deliver answers a POST that is not initialize: refused, or sent to the
// agent with 202.
func (s *Server) deliver(w http.ResponseWriter, r *http.Request, c *serveConn, body []byte, m *wire.Message) {
	connID := r.Header.Get(acphttp.HeaderConnectionID)
	num := uint32(0)
	if c != nil {
		num = c.num
	}
	switch {
	case m.Kind == wire.KindBatch:
		s.answer(w, r, num, http.StatusNotImplemented, "JSON-RPC batches are not supported; send one message per POST")
	case connID == "":
		s.answer(w, r, num, http.StatusBadRequest, "missing Acp-Connection-Id header; POST initialize first to get one")
	case c == nil:
		s.answer(w, r, num, http.StatusNotFound, "unknown Acp-Connection-Id "+connID+"; the connection has ended, POST initialize again")
	case r.Header.Get(acphttp.HeaderSessionID) == "" && c.sessionScoped(m) != "":
		s.answer(w, r, num, http.StatusBadRequest, "session-scoped message without Acp-Session-Id header (session "+c.sessionScoped(m)+")")
	default:
		c.noteClientMessage(m)
		if err := c.send(body); err != nil {
			s.answer(w, r, num, http.StatusBadGateway, err.Error())
			return
		}
		s.answer(w, r, num, http.StatusAccepted, "")
	}
}

// sessionScoped returns the session a client message belongs to, when
// the RFD wants Acp-Session-Id on its POST: a request or notification
// naming a session (except those that open one), or a response to an
// agent request about a session (e.g. a permission answer).
func (c *serveConn) sessionScoped(m *wire.Message) string {
	switch m.Kind {
	case wire.KindRequest, wire.KindNotification:
		if connLevelMethods[m.Method] {
			return ""
		}
		return m.SessionID
	case wire.KindResponse, wire.KindError:
		return c.answersSessionRequest(m.ID)
	}
	return ""
}

// initialize starts a connection: a new agent process receives the
// request, and its reply is the POST's 200 body, with Acp-Connection-Id.
func (s *Server) initialize(w http.ResponseWriter, r *http.Request, body []byte, m *wire.Message) {
	if !s.acquire() {
		s.recordPOST(0, r, body, 0)
		s.refuseFull(w, r)
		return
	}
	c, err := s.startConn(nil)
	if err != nil {
		s.recordPOST(0, r, body, 0)
		s.answer(w, r, 0, http.StatusBadGateway, err.Error())
		return
	}
	defer c.unhold() // startConn's hold: the client is waiting for the reply
	s.recordPOST(c.num, r, body, 0)
	reply := c.awaitInit(m.ID)
	if err := c.send(body); err != nil {
		c.close()
		s.answer(w, r, c.num, http.StatusBadGateway, err.Error())
		return
	}
	select {
	case msg, ok := <-reply:
		if !ok {
			s.answer(w, r, c.num, http.StatusBadGateway, "the agent exited before answering initialize; see its stderr above")
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set(acphttp.HeaderConnectionID, c.id)
		setConnCookie(h, c.id)
		w.WriteHeader(http.StatusOK)
		w.Write(msg)
		s.opts.Recorder.Frame(c.num, wire.DirAgent, tap.Now(), msg, 0, s.envelope(r, wire.StreamPOSTReply, http.StatusOK, h))
	case <-r.Context().Done():
		c.close() // nobody will ever learn this connection's id
	}
}

// serveGET opens the connection-scoped or a session-scoped SSE stream.
func (s *Server) serveGET(w http.ResponseWriter, r *http.Request) {
	connID, sid := r.Header.Get(acphttp.HeaderConnectionID), r.Header.Get(acphttp.HeaderSessionID)
	c := s.lookup(connID)
	num := uint32(0)
	if c != nil {
		num = c.num
	}
	if !acceptsEventStream(r.Header.Get("Accept")) {
		s.answer(w, r, num, http.StatusNotAcceptable, "GET needs Accept: text/event-stream (or Upgrade: websocket)")
		return
	}
	if connID == "" {
		s.answer(w, r, num, http.StatusBadRequest, "missing Acp-Connection-Id header")
		return
	}
	if c == nil {
		s.answer(w, r, num, http.StatusNotFound, "unknown Acp-Connection-Id "+connID)
		return
	}
	st := c.streamFor(sid)
	if st == nil {
		s.answer(w, r, num, http.StatusNotFound, fmt.Sprintf("unknown Acp-Session-Id %s on this connection, and %d streams already wait for their session/load", sid, maxAwaitedSessions))
		return
	}
	ok, closed := st.attach()
	switch {
	case closed:
		s.answer(w, r, num, http.StatusNotFound, "the connection has ended")
		return
	case !ok:
		s.answer(w, r, num, http.StatusConflict, "this stream is already open in another request")
		return
	}
	defer st.detach()
	c.hold()
	defer c.unhold()
	s.streamSSE(w, r, c, st, sid)
	if sid == "" {
		go c.closeUnlessReopened(s.disconnectGrace()) // grace timer: ends after the grace
	}
}

// streamSSE answers 200 and writes the stream until the client leaves or
// the connection ends.
func (s *Server) streamSSE(w http.ResponseWriter, r *http.Request, c *serveConn, st *outStream, sid string) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set(HeaderEventOrder, "connection")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	s.opts.Recorder.Frame(c.num, wire.DirAgent, tap.Now(), nil, 0, s.envelope(r, wire.StreamHTTPControl, http.StatusOK, h))
	stream := wire.StreamConnection
	if sid != "" {
		stream = wire.StreamSession
	}
	keepalive := s.opts.KeepAlive
	sw := &sseWriter{w: w, rc: rc, keepalive: keepalive, nextID: c.nextEventID, record: func(msg []byte, id string) {
		env := s.envelope(r, stream, http.StatusOK, nil)
		env.EventID = id
		s.opts.Recorder.Frame(c.num, wire.DirAgent, tap.Now(), msg, 0, env)
	}}
	sw.run(st, r.Context().Done())
}

func (s *Server) disconnectGrace() time.Duration {
	if s.opts.DisconnectGrace != 0 {
		return s.opts.DisconnectGrace
	}
	return DefaultDisconnectGrace
}

// closeUnlessReopened tears the connection down when its connection
// stream stays closed for grace: the client is gone.
func (c *serveConn) closeUnlessReopened(grace time.Duration) {
	if grace < 0 {
		return
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
		return
	case <-t.C:
	}
	c.conn.mu.Lock()
	attached := c.conn.attached
	c.conn.mu.Unlock()
	if !attached {
		c.close()
	}
}

// serveDELETE ends a connection and its agent.
func (s *Server) serveDELETE(w http.ResponseWriter, r *http.Request) {
	connID := r.Header.Get(acphttp.HeaderConnectionID)
	if connID == "" {
		s.answer(w, r, 0, http.StatusBadRequest, "missing Acp-Connection-Id header")
		return
	}
	c := s.lookup(connID)
	if c == nil {
		s.answer(w, r, 0, http.StatusNotFound, "unknown Acp-Connection-Id "+connID)
		return
	}
	c.close()
	s.answer(w, r, c.num, http.StatusAccepted, "")
}

func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// acceptsEventStream reports whether an Accept header names SSE, as the
// RFD requires (a bare "*/*" does not).
func acceptsEventStream(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "text/event-stream":
			return true
		}
	}
	return false
}
