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

type pairKey struct {
	dir Dir
	id  string
}

// Pairer matches responses to requests. Each direction has its own id
// space, so a request is keyed by the direction it travelled and the
// exact bytes of its id, never by the id alone.
type Pairer struct {
	pending map[pairKey]Pending
}

// NewPairer returns an empty Pairer.
func NewPairer() *Pairer {
	return &Pairer{pending: make(map[pairKey]Pending)}
}

// Request notes a request. It reports the request already in flight with
// the same direction and id, which a duplicate id displaces.
func (p *Pairer) Request(req Pending) (displaced Pending, dup bool) {
	k := pairKey{req.Dir, req.ID}
	displaced, dup = p.pending[k]
	p.pending[k] = req
	return displaced, dup
}

// Response finds and forgets the request that a response travelling in
// dir answers. A null id answers nothing.
func (p *Pairer) Response(dir Dir, id []byte) (Pending, bool) {
	if len(id) == 0 || string(id) == "null" {
		return Pending{}, false
	}
	k := pairKey{dir.Reverse(), string(id)}
	req, ok := p.pending[k]
	if ok {
		delete(p.pending, k)
	}
	return req, ok
}

// Outstanding returns the requests not yet answered, in no fixed order.
func (p *Pairer) Outstanding() []Pending {
	out := make([]Pending, 0, len(p.pending))
	for _, req := range p.pending {
		out = append(out, req)
	}
	return out
}

// ResponseSession attributes a response to a session: responses carry no
// sessionId, so it comes from the request, or for session/new and
// session/fork from result.sessionId, the only place that id appears.
func ResponseSession(req Pending, result []byte) string {
	if (req.Method == "session/new" || req.Method == "session/fork") && len(result) > 0 && result[0] == '{' {
		if s := StringMember(result, "sessionId"); s != "" {
			return s
		}
	}
	return req.SessionID
}
