package protocol

import (
	"bytes"

	"github.com/acpscope/acpscope/wire"
)

// Pair links the responses in msgs to the requests they answer, with
// wire.Pairer's rules (a connection's id spaces, one per direction), and
// returns for each message the index of its other half, -1 when none.
// Like the store, it gives each paired response its request's method and
// the session it belongs to (ResponseSession), in place.
func Pair(msgs []Msg) []int {
	peer := make([]int, len(msgs))
	pairers := map[uint32]*wire.Pairer{}
	for i := range msgs {
		peer[i] = -1
		m := &msgs[i]
		switch m.Kind {
		case wire.KindRequest, wire.KindResponse, wire.KindError:
		default:
			continue
		}
		p := pairers[m.Conn]
		if p == nil {
			p = wire.NewPairer()
			pairers[m.Conn] = p
		}
		if m.Kind == wire.KindRequest {
			p.Request(wire.Pending{Dir: m.Dir, ID: string(m.ID), Seq: uint64(i)})
			continue
		}
		req, ok := p.Response(m.Dir, m.ID)
		if !ok {
			continue
		}
		j := int(req.Seq)
		peer[i], peer[j] = j, i
		m.Method = msgs[j].Method
		m.Session = ResponseSession(msgs[j].Method, msgs[j].Session, resultMember(m))
	}
	return peer
}

// resultMember returns the "result" of a response whose result can name a
// session, nil otherwise: only those are worth reading.
func resultMember(m *Msg) []byte {
	if m.Kind != wire.KindResponse || !MintsSession(m.Method) {
		return nil
	}
	b := bytes.TrimSpace(m.Body)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	return wire.Value(b, "result")
}
