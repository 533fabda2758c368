package capture

import (
	"strconv"
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Filter is a parsed filter expression: the small language the inspector's
// filter bar and `acpscope dump --filter` share. A Filter is immutable and
// safe for concurrent use.
type Filter struct {
	src  string
	root filterNode // nil matches everything
}

// filterNode is one operator or term of a filter.
type filterNode interface {
	match(c *filterEval) bool
	needsBody() bool
	write(b *strings.Builder)
}

// filterEval carries one record through a match and loads its body at most
// once, and only when a term asks for it.
type filterEval struct {
	r      *Record
	load   func() []byte
	body   []byte
	loaded bool
	// bodyOf reads another record of the same capture (an answer's
	// request); nil where the caller has only this record.
	bodyOf func(seq uint64) []byte
}

func (c *filterEval) bytes() []byte {
	if !c.loaded {
		c.loaded = true
		if c.r.Body != nil {
			c.body = c.r.Body
		} else if c.load != nil {
			c.body = c.load()
		}
	}
	return c.body
}

// Match reports whether r passes the filter. body returns the record's
// exact bytes; it is called at most once, only when a term needs them
// (free text, update:, a JSON path) and r.Body is nil. body may be nil when
// NeedsBody is false.
func (f *Filter) Match(r *Record, body func() []byte) bool {
	if f == nil || f.root == nil {
		return true
	}
	return f.root.match(&filterEval{r: r, load: body})
}

// MatchIn is Match for a record read from src: terms about what a request
// carried (mcp.method, mcp.tool) match its answer too, by reading the
// request the answer is paired with.
func (f *Filter) MatchIn(src Source, r *Record, body func() []byte) bool {
	if f == nil || f.root == nil {
		return true
	}
	return f.root.match(&filterEval{r: r, load: body, bodyOf: bodyReader(src)})
}

// bodyReader reads bodies of src, nil on any error: a filter term that
// cannot read a record does not match.
func bodyReader(src Source) func(uint64) []byte {
	return func(seq uint64) []byte {
		b, err := src.Body(seq)
		if err != nil {
			return nil
		}
		return b
	}
}

// NeedsBody reports whether some term may read record bodies, which makes
// a filter over a large capture much slower.
func (f *Filter) NeedsBody() bool {
	return f != nil && f.root != nil && f.root.needsBody()
}

// Empty reports whether the filter matches everything.
func (f *Filter) Empty() bool { return f == nil || f.root == nil }

// Source returns the text the filter was parsed from.
func (f *Filter) Source() string {
	if f == nil {
		return ""
	}
	return f.src
}

// String returns the filter in canonical form: explicit operators, every
// binary operation in parentheses, values quoted where needed. It parses
// back to the same filter.
func (f *Filter) String() string {
	if f == nil || f.root == nil {
		return ""
	}
	var b strings.Builder
	f.root.write(&b)
	return b.String()
}

type fAndNode struct{ l, r filterNode }
type fOrNode struct{ l, r filterNode }
type fNotNode struct{ x filterNode }

func (n *fAndNode) match(c *filterEval) bool { return n.l.match(c) && n.r.match(c) }
func (n *fOrNode) match(c *filterEval) bool  { return n.l.match(c) || n.r.match(c) }
func (n *fNotNode) match(c *filterEval) bool { return !n.x.match(c) }

func (n *fAndNode) needsBody() bool { return n.l.needsBody() || n.r.needsBody() }
func (n *fOrNode) needsBody() bool  { return n.l.needsBody() || n.r.needsBody() }
func (n *fNotNode) needsBody() bool { return n.x.needsBody() }

func (n *fAndNode) write(b *strings.Builder) { writeFilterBinary(b, n.l, "and", n.r) }
func (n *fOrNode) write(b *strings.Builder)  { writeFilterBinary(b, n.l, "or", n.r) }
func (n *fNotNode) write(b *strings.Builder) { b.WriteString("not "); n.x.write(b) }

func writeFilterBinary(b *strings.Builder, l filterNode, op string, r filterNode) {
	b.WriteByte('(')
	l.write(b)
	b.WriteString(" " + op + " ")
	r.write(b)
	b.WriteByte(')')
}

// quoteFilterValue writes v bare when the lexer would read it back as one word,
// and as a quoted string otherwise.
func quoteFilterValue(v string) string {
	if v != "" {
		bare := true
		for i := 0; i < len(v); i++ {
			if !isFilterWordByte(v[i]) {
				bare = false
				break
			}
		}
		if bare {
			return v
		}
	}
	return quoteFilterString(v)
}

func quoteFilterString(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if v[i] == '"' || v[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
	return b.String()
}

// globMatch matches s against a pattern in which * stands for any run of
// bytes, '/' included; everything else is literal.
func globMatch(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// fMethodNode matches the method a record means: for a proxy-chain
// wrapper, the inner one. A pattern that also names a wrapper's own
// method (method:_proxy/*) matches wrapped records by the wrapper read
// from their bytes.
type fMethodNode struct {
	pattern string
	wrapper bool // the pattern matches some successor wrapper's name
}

func newMethodNode(pattern string) *fMethodNode {
	n := &fMethodNode{pattern: pattern}
	for _, w := range []string{"_proxy/successor/request", "_proxy/successor/notification", "_proxy/successor", "proxy/successor"} {
		n.wrapper = n.wrapper || globMatch(pattern, w)
	}
	return n
}

func (n *fMethodNode) match(c *filterEval) bool {
	if c.r.Method != "" && globMatch(n.pattern, c.r.Method) {
		return true
	}
	if !n.wrapper || c.r.Hop == 0 || c.r.Kind.IsResponse() {
		return false
	}
	m := c.r.Msg
	m.Body = c.bytes()
	in := protocol.Unwrap(&m)
	return in.Wrapper != "" && globMatch(n.pattern, in.Wrapper)
}
func (n *fMethodNode) needsBody() bool { return n.wrapper }
func (n *fMethodNode) write(b *strings.Builder) {
	b.WriteString("method:" + quoteFilterValue(n.pattern))
}

// fHopNode matches records by their proxy-chain hop.
type fHopNode struct{ hop uint8 }

func (n *fHopNode) match(c *filterEval) bool { return c.r.Kind.IsProtocol() && c.r.Hop == n.hop }
func (n *fHopNode) needsBody() bool          { return false }
func (n *fHopNode) write(b *strings.Builder) {
	b.WriteString("hop:" + strconv.FormatUint(uint64(n.hop), 10))
}

type fSessionNode struct{ prefix string }

func (n *fSessionNode) match(c *filterEval) bool { return strings.HasPrefix(c.r.Session, n.prefix) }
func (n *fSessionNode) needsBody() bool          { return false }
func (n *fSessionNode) write(b *strings.Builder) {
	b.WriteString("session:" + quoteFilterValue(n.prefix))
}

type fIdNode struct{ id string }

// match compares the id's exact bytes, or a string id's decoded text, so
// id:7 finds both 7 and "7".
func (n *fIdNode) match(c *filterEval) bool {
	id := c.r.ID
	if id == nil {
		return false
	}
	if string(id) == n.id {
		return true
	}
	if len(id) >= 2 && id[0] == '"' {
		s, err := strconv.Unquote(string(id))
		return err == nil && s == n.id
	}
	return false
}
func (n *fIdNode) needsBody() bool          { return false }
func (n *fIdNode) write(b *strings.Builder) { b.WriteString("id:" + quoteFilterValue(n.id)) }

type fDirNode struct{ dir wire.Dir }

func (n *fDirNode) match(c *filterEval) bool { return c.r.Dir == n.dir && c.r.Kind != wire.KindStderr }
func (n *fDirNode) needsBody() bool          { return false }
func (n *fDirNode) write(b *strings.Builder) { b.WriteString("dir:" + n.dir.String()) }

type fKindNode struct {
	name  string
	kinds uint32
}

func (n *fKindNode) match(c *filterEval) bool { return n.kinds&(1<<c.r.Kind) != 0 }
func (n *fKindNode) needsBody() bool          { return false }
func (n *fKindNode) write(b *strings.Builder) {
	if n.name == "error" {
		b.WriteString("error")
		return
	}
	b.WriteString("kind:" + n.name)
}

type fFlagNode struct {
	flag wire.Flags
	name string
}

func (n *fFlagNode) match(c *filterEval) bool { return c.r.Flags&n.flag != 0 }
func (n *fFlagNode) needsBody() bool          { return false }
func (n *fFlagNode) write(b *strings.Builder) { b.WriteString("flag:" + n.name) }

type fCompareNode struct {
	field string
	op    string
	n     int64
}

func (n *fCompareNode) match(c *filterEval) bool {
	var v int64
	switch n.field {
	case "size":
		v = c.r.Size
	case "seq":
		v = int64(c.r.Seq)
	case "hop":
		if !c.r.Kind.IsProtocol() {
			return false
		}
		v = int64(c.r.Hop)
	case "latency":
		// Only answers to requests have a latency.
		if c.r.Kind != wire.KindResponse && c.r.Kind != wire.KindError || c.r.Peer == 0 {
			return false
		}
		v = int64(c.r.Latency)
	}
	switch n.op {
	case ">":
		return v > n.n
	case ">=":
		return v >= n.n
	case "<":
		return v < n.n
	case "<=":
		return v <= n.n
	}
	return v == n.n
}

func (n *fCompareNode) needsBody() bool { return false }
func (n *fCompareNode) write(b *strings.Builder) {
	b.WriteString(n.field + n.op)
	if n.field == "latency" {
		b.WriteString(filterDuration(n.n))
		return
	}
	b.WriteString(strconv.FormatInt(n.n, 10))
}

// fFaultNode matches records of messages acpscope altered (a fault plan,
// a hold, a hand-sent message) by any of the names their Fault carries,
// so one term answers "what did rule slow-agent do" and "what was dropped".
type fFaultNode struct{ pattern string }

func (n *fFaultNode) match(c *filterEval) bool {
	f := c.r.Fault
	if f == nil {
		return false
	}
	for _, name := range [...]string{f.Action, f.Stage, f.By, strings.ToLower(f.Rule)} {
		if name != "" && globMatch(n.pattern, name) {
			return true
		}
	}
	return false
}
func (n *fFaultNode) needsBody() bool          { return false }
func (n *fFaultNode) write(b *strings.Builder) { b.WriteString("fault:" + quoteFilterValue(n.pattern)) }

type fConnNode struct{ conn uint32 }

func (n *fConnNode) match(c *filterEval) bool { return c.r.Conn == n.conn }
func (n *fConnNode) needsBody() bool          { return false }
func (n *fConnNode) write(b *strings.Builder) {
	b.WriteString("conn:" + strconv.FormatUint(uint64(n.conn), 10))
}
