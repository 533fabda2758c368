package capture

import (
	"errors"
	"fmt"
	"strings"
)

// ErrManySessions: the capture holds several sessions and none was chosen.
var ErrManySessions = errors.New("the capture holds several sessions; choose one with --session")

// Selection is the set of records one export covers: one session's, or
// every record when the capture has no session. It decides record by
// record, holding only the sessions and connections of the capture, so
// an export of a million records does not hold a million of anything.
type Selection struct {
	// Session is the chosen session ("" when the capture has none).
	Session string
	// Sessions lists every session of the source, in order.
	Sessions []string
	// Total is how many records of the source the selection looks at:
	// those of the connections the session used.
	Total uint64

	src   Source
	conns map[uint32]bool // the connections the session used; nil: all
}

// SelectSession picks the records of one session from src: those that
// carry its id, and the connection-level records (initialize, stderr, …)
// of the connections it used, but not the session/new of other sessions.
// session "" picks the only session, or everything when there is none
// or all is set.
func SelectSession(src Source, session string, all bool) (*Selection, error) {
	connsOf := map[string]map[uint32]bool{}
	perConn := map[uint32]uint64{}
	sel := &Selection{src: src}
	err := src.Scan(1, func(r *Record) bool {
		perConn[r.Conn]++
		if r.Session == "" {
			return true
		}
		if connsOf[r.Session] == nil {
			connsOf[r.Session] = map[uint32]bool{}
			sel.Sessions = append(sel.Sessions, r.Session)
		}
		connsOf[r.Session][r.Conn] = true
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	switch {
	case session == "" && all:
	case session == "" && len(sel.Sessions) > 1:
		return nil, fmt.Errorf("%w (sessions: %s)", ErrManySessions, strings.Join(sel.Sessions, ", "))
	case session == "" && len(sel.Sessions) == 1:
		session = sel.Sessions[0]
	case session != "" && connsOf[session] == nil:
		return nil, badOption(fmt.Errorf("no session %q in the capture (sessions: %s)", session, strings.Join(sel.Sessions, ", ")))
	}
	sel.Session = session
	if session != "" {
		sel.conns = connsOf[session]
	}
	for conn, n := range perConn {
		if sel.conns == nil || sel.conns[conn] {
			sel.Total += n
		}
	}
	return sel, nil
}

// Looks reports whether the selection looks at r at all: r is on one of
// the session's connections. Total counts exactly these records.
func (s *Selection) Looks(r *Record) bool {
	return s.conns == nil || s.conns[r.Conn]
}

// Includes reports whether r belongs to the selection. A record without
// a session whose peer has one (a session/new, known from its answer)
// belongs to its peer's session.
func (s *Selection) Includes(r *Record) bool {
	if !s.Looks(r) {
		return false
	}
	if s.Session == "" {
		return true
	}
	session := r.Session
	if session == "" && r.Peer != 0 {
		if peer, err := s.src.Record(r.Peer); err == nil {
			session = peer.Session
		}
	}
	return session == "" || session == s.Session
}
