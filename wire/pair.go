package wire

// Pending is a request still waiting for its response.
type Pending struct {
	Dir       Dir // the direction the request travelled
	ID        string
	Seq       uint64
	Time      int64 // unix nanoseconds
	Method    string
	SessionID string
}

// Pairer matches responses to requests. Each direction has its own id
// space, so a request is keyed by the direction it travelled and the
// exact bytes of its id, never by the id alone. The directions have a map
// each: keyed by the id string alone, a lookup takes the map's string
// fast path, which a (direction, id) struct key does not (BenchmarkPairer).
type Pairer struct {
	// pending is indexed by Dir. Slot 0 holds requests of any other
	// direction; no response reaches them, as Reverse never returns one.
	pending [3]map[string]Pending
}

// NewPairer returns an empty Pairer.
func NewPairer() *Pairer {
	return &Pairer{pending: [3]map[string]Pending{{}, {}, {}}}
}

// space returns the id space of requests that travelled in dir.
func (p *Pairer) space(dir Dir) map[string]Pending {
	if int(dir) >= len(p.pending) {
		return p.pending[0]
	}
	return p.pending[dir]
}

// Request notes a request. It reports the request already in flight with
// the same direction and id, which a duplicate id displaces.
func (p *Pairer) Request(req Pending) (displaced Pending, dup bool) {
	m := p.space(req.Dir)
	displaced, dup = m[req.ID]
	m[req.ID] = req
	return displaced, dup
}

// Response finds and forgets the request that a response travelling in
// dir answers. A null id answers nothing.
func (p *Pairer) Response(dir Dir, id []byte) (Pending, bool) {
	if len(id) == 0 || string(id) == "null" {
		return Pending{}, false
	}
	m := p.space(dir.Reverse())
	req, ok := m[string(id)]
	if ok {
		delete(m, string(id))
	}
	return req, ok
}

// Outstanding returns the requests not yet answered, in no fixed order.
func (p *Pairer) Outstanding() []Pending {
	var out []Pending
	for _, m := range p.pending {
		for _, req := range m {
			out = append(out, req)
		}
	}
	return out
}
