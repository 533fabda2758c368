package replay

import (
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Message is one protocol message of a conversation, recorded or live.
type Message struct {
	Seq  uint64 // capture sequence number (or position, for live ones)
	Time int64  // unix nanoseconds
	Dir  wire.Dir
	Kind wire.Kind
	// ID is the exact bytes of the JSON-RPC id, nil when absent.
	ID []byte
	// Method of a request or notification; of a response, the method of
	// the request it answers.
	Method  string
	Session string
	// Peer is the index (in the same slice) of the request a response
	// answers, or of the response to a request; -1 when unpaired.
	Peer    int
	Latency time.Duration
	Body    []byte
}

// IsRequest reports whether m expects an answer.
func (m *Message) IsRequest() bool { return m.Kind == wire.KindRequest }

// IsResponse reports whether m answers a request (result or error).
func (m *Message) IsResponse() bool { return m.Kind == wire.KindResponse || m.Kind == wire.KindError }

// NewMessage classifies one frame. Batches are not split here; callers
// that may see them use Split.
func NewMessage(seq uint64, t int64, dir wire.Dir, body []byte) Message {
	c := wire.Classify(body)
	return Message{
		Seq: seq, Time: t, Dir: dir, Kind: c.Kind,
		ID: c.ID, Method: c.Method, Session: c.SessionID,
		Peer: -1, Body: body,
	}
}

// Split turns one frame into messages, one per batch member.
func Split(seq uint64, t int64, dir wire.Dir, body []byte) []Message {
	c := wire.Classify(body)
	if c.Kind != wire.KindBatch {
		return []Message{NewMessage(seq, t, dir, body)}
	}
	out := make([]Message, 0, len(c.Members))
	for _, mem := range c.Members {
		out = append(out, NewMessage(seq, t, dir, body[mem.Start:mem.End]))
	}
	return out
}

// Pair links responses to their requests (per direction id spaces),
// fills in the responses' Method, Session and Latency, and attributes a
// session/new response to the session it created. It returns msgs.
func Pair(msgs []Message) []Message {
	p := wire.NewPairer[int]()
	for i := range msgs {
		m := &msgs[i]
		m.Peer = -1
		switch {
		case m.Kind == wire.KindRequest:
			p.Request(m.Dir, m.ID, i)
		case m.IsResponse():
			j, ok := p.Response(m.Dir, m.ID)
			if !ok {
				continue
			}
			req := &msgs[j]
			m.Peer, req.Peer = j, i
			m.Method = req.Method
			m.Latency = time.Duration(m.Time - req.Time)
			c := wire.Classify(m.Body)
			m.Session = protocol.ResponseSession(req.Method, req.Session, c.Result)
		}
	}
	return msgs
}

// Protocol keeps the JSON-RPC messages of msgs (no stderr, no garbage).
func Protocol(msgs []Message) []Message {
	var out []Message
	for _, m := range msgs {
		switch m.Kind {
		case wire.KindRequest, wire.KindNotification, wire.KindResponse, wire.KindError:
			out = append(out, m)
		}
	}
	return out
}

// Sessions lists the sessionIds in msgs in order of first appearance.
func Sessions(msgs []Message) []string {
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
// Pair must have run; the result is paired again.
func OnlySession(msgs []Message, session string) []Message {
	var out []Message
	for i, m := range msgs {
		s := m.Session
		if s == "" && m.IsRequest() && m.Peer >= 0 {
			s = msgs[m.Peer].Session // session/new: known from its answer
		}
		if s == "" || s == session {
			out = append(out, msgs[i])
		}
	}
	return Pair(out)
}
