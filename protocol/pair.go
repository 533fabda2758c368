package protocol

import (
	"bytes"

	"github.com/acpscope/acpscope/wire"
)

// Pair links the responses in msgs to the requests they answer, with
// wire.Pairer's rules (a connection's id spaces, one per direction), and
// returns for each message the index of its other half, -1 when none.
// Like the store, it gives each paired response its request's method, hop
// and the session it belongs to (ResponseSession), in place. A wrapped
// request and its answer pair by the outer id, which is the only one the
// proxy-chain RFD gives them: the answer is a plain response to it.
func Pair(msgs []Msg) []int {
	peer := make([]int, len(msgs))
	pairers := pairs[int]{}
	for i := range msgs {
		peer[i] = -1
		m := &msgs[i]
		switch m.Kind {
		case wire.KindRequest, wire.KindResponse, wire.KindError:
		default:
			continue
		}
		p := pairers.of(m.Conn)
		if m.Kind == wire.KindRequest {
			Resolve(m)
			p.Request(m.Dir, m.ID, i)
			continue
		}
		j, ok := p.Response(m.Dir, m.ID)
		if !ok {
			continue
		}
		peer[i], peer[j] = j, i
		m.Method, m.Hop = msgs[j].Method, msgs[j].Hop
		m.Session = ResponseSession(msgs[j].Method, msgs[j].Session, resultMember(m))
	}
	return peer
}

// pairs holds a wire.Pairer per connection: JSON-RPC ids are unique per
// connection and per direction (each side has its own id space).
type pairs[T any] map[uint32]*wire.Pairer[T]

// of returns the pairer of connection conn.
func (p pairs[T]) of(conn uint32) *wire.Pairer[T] {
	pr := p[conn]
	if pr == nil {
		pr = wire.NewPairer[T]()
		p[conn] = pr
	}
	return pr
}

// pendingKey names a request where a map must remember it apart from
// pairing (answered requests, permission requests): by connection,
// direction and exact id.
type pendingKey struct {
	conn uint32
	dir  wire.Dir
	id   string
}

// key names the request sent in dir with id on u's connection.
func (u *unit) key(dir wire.Dir, id []byte) pendingKey {
	return pendingKey{u.Conn, dir, idKey(id)}
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
