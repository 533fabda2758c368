package wire

// Pairer matches responses to requests on one connection; T is what its
// user keeps of a request (a sequence number, an index, the request
// itself). Each direction has its own id space, so a request is keyed by
// the direction it travelled and the exact bytes of its id, never by the
// id alone. The directions have a map each: keyed by the id string
// alone, a lookup takes the map's string fast path, which a (direction,
// id) struct key does not (BenchmarkPairer).
//
// It is the one pairing of acpscope: the store, lint, the transcript and
// replay all use it.
type Pairer[T any] struct {
	// pending is indexed by Dir. Slot 0 holds requests of any other
	// direction; no response reaches them, as Reverse never returns one.
	pending [3]map[string]T
}

// NewPairer returns an empty Pairer.
func NewPairer[T any]() *Pairer[T] {
	return &Pairer[T]{pending: [3]map[string]T{{}, {}, {}}}
}

// space returns the id space of requests that travelled in dir.
func (p *Pairer[T]) space(dir Dir) map[string]T {
	if int(dir) >= len(p.pending) {
		return p.pending[0]
	}
	return p.pending[dir]
}

// Request notes a request that travelled in dir with id. It reports the
// request already in flight with the same direction and id, which a
// duplicate id displaces.
func (p *Pairer[T]) Request(dir Dir, id []byte, req T) (displaced T, dup bool) {
	m := p.space(dir)
	displaced, dup = m[string(id)]
	m[string(id)] = req
	return displaced, dup
}

// Response finds and forgets the request that a response travelling in
// dir with id answers. A null or absent id answers nothing.
func (p *Pairer[T]) Response(dir Dir, id []byte) (T, bool) {
	if len(id) == 0 || string(id) == "null" {
		var none T
		return none, false
	}
	m := p.space(dir.Reverse())
	req, ok := m[string(id)]
	if ok {
		delete(m, string(id))
	}
	return req, ok
}

// InFlight returns the request that travelled in dir with id and is not
// answered yet, without forgetting it.
func (p *Pairer[T]) InFlight(dir Dir, id []byte) (T, bool) {
	req, ok := p.space(dir)[string(id)]
	return req, ok
}

// Outstanding returns the requests not yet answered, in no fixed order.
func (p *Pairer[T]) Outstanding() []T {
	var out []T
	for _, m := range p.pending {
		for _, req := range m {
			out = append(out, req)
		}
	}
	return out
}
