package replay

import (
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Replay works on protocol.Msg, the message every package shares:
// recorded ones as the store holds them (a response already carries its
// request's method and session), live ones as Split classifies them.
// Where it needs a message's other half it asks protocol.Pair for the
// indexes.

// Split classifies one live frame into messages, one per batch member.
func Split(seq uint64, t int64, dir wire.Dir, body []byte) []protocol.Msg {
	m := protocol.FromLine(seq, dir, body)
	m.Time = t
	if m.Kind != wire.KindBatch {
		return []protocol.Msg{m}
	}
	c := wire.Classify(body)
	out := make([]protocol.Msg, 0, len(c.Members))
	for _, mem := range c.Members {
		mm := protocol.FromLine(seq, dir, body[mem.Start:mem.End])
		mm.Time = t
		out = append(out, mm)
	}
	return out
}

// Protocol returns a copy of the JSON-RPC messages of msgs (no stderr, no
// garbage, no batch frames: their members are messages of their own).
func Protocol(msgs []protocol.Msg) []protocol.Msg {
	var out []protocol.Msg
	for _, m := range msgs {
		switch m.Kind {
		case wire.KindRequest, wire.KindNotification, wire.KindResponse, wire.KindError:
			out = append(out, m)
		}
	}
	return out
}

// Sessions lists the sessionIds in msgs in order of first appearance.
func Sessions(msgs []protocol.Msg) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range msgs {
		if m.Session != "" && !seen[m.Session] {
			seen[m.Session] = true
			out = append(out, m.Session)
		}
	}
	return out
}

// OnlySession keeps the messages of one session, plus the connection
// level messages (initialize, authenticate, …) that carry no session.
// Messages of other sessions, and the session/new that created them, go.
// It pairs msgs (protocol.Pair) to learn a session/new's session from its
// answer.
func OnlySession(msgs []protocol.Msg, session string) []protocol.Msg {
	peer := protocol.Pair(msgs)
	var out []protocol.Msg
	for i, m := range msgs {
		s := m.Session
		if s == "" && m.Kind == wire.KindRequest && peer[i] >= 0 {
			s = msgs[peer[i]].Session // session/new: known from its answer
		}
		if s == "" || s == session {
			out = append(out, m)
		}
	}
	return out
}
