package capture

// Secrets in a JSON message wherever they are, beyond the places ACP
// defines (redact.go's secretRule): values of credential-named keys at
// any depth (a tool call's rawInput.api_key, a result's accessToken), the
// value of a {name, value} pair whose name names a credential (the env of
// terminal/create), mcpServers' env and headers in any message and form,
// flag values in argument arrays, and token shapes, URL passwords and key
// blocks inside any string, object keys included. One walk over the
// message finds them; pairs and argument arrays, whose parts may come in
// any order, are settled after it.

import (
	"bytes"
	"encoding/json"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"sort"
	"strings"
)

// container is an object or array the walk is inside.
type container struct {
	start, end int
	array      bool
	n          int // children visited so far
}

// pairSlot is an object that may be a {name, value} pair.
type pairSlot struct {
	credential bool
	value      Edit // Start == End: no string value seen
	path       []string
}

// argvList holds the elements of one array that matter to argvScan.
type argvList struct {
	start int // the array's
	owner int // start of the object holding the array, or -1
	elems []argvElem
	dash  bool // the last element kept starts with a dash
}

type argvElem struct {
	idx, start, end int // the element's index and the span of its inside
	path            []string
}

// msgScan is one message's redaction in progress.
type msgScan struct {
	r          *Redactor
	body       []byte
	method     string
	batch      bool
	hop        int               // proxy-chain wrappers around the message (protocol.Unwrap)
	batchM     map[string]string // a batch member's method, by index
	edits      []Edit
	found      []Redaction
	at         []int          // where each of found starts in body
	where      map[string]int // index in found, by path
	secretEnd  int            // strings before this offset lie in a secret container
	secretRule string
	stack      []container
	pairs      map[int]*pairSlot
	argv       map[int]*argvList
	commands   map[int]string // a "command" member's tool, by its object's start
}

func newMsgScan(r *Redactor, method string, body []byte) *msgScan {
	// The maps are made when first written: most messages need none,
	// and making four per message was a tenth of an export's time.
	return &msgScan{r: r, body: body, method: method, hop: hops(body),
		batch: bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("["))}
}

// hops counts the proxy-chain wrappers around body (protocol.Unwrap).
// Only a message whose method wraps another has any, and its method is
// found without reading the rest: Unwrap validates the whole body first,
// which for a 200 MB message took as long as the rest of its redaction.
func hops(body []byte) int {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' || !protocol.IsSuccessor(wire.StringMember(b, "method")) {
		return 0
	}
	return protocol.Unwrap(&protocol.Msg{Body: body}).Hop
}

// message redacts one JSON message; ok is false when body is not JSON.
func (r *Redactor) message(method string, body []byte) (out []byte, found []Redaction, ok bool) {
	s := newMsgScan(r, method, body)
	if WalkJSON(body, s.visit) != nil {
		return body, nil, false
	}
	s.finish()
	return ApplyEdits(body, mergeEdits(s.edits)), s.list(), true
}

// list returns what was found in document order.
func (s *msgScan) list() []Redaction {
	order := make([]int, len(s.found))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return s.at[order[i]] < s.at[order[j]] })
	out := make([]Redaction, len(order))
	for i, k := range order {
		out[i] = s.found[k]
	}
	return out
}

func (s *msgScan) visit(path []string, start, end int) bool {
	for n := len(s.stack); n > 0 && s.stack[n-1].end <= start; n-- {
		s.stack = s.stack[:n-1]
	}
	var parent *container
	idx := -1
	if n := len(s.stack); n > 0 {
		parent = &s.stack[n-1]
		idx = parent.n
		parent.n++
	}
	s.value(path, parent, idx, start, end)
	if c := s.body[start]; c == '{' || c == '[' {
		s.stack = append(s.stack, container{start: start, end: end, array: c == '['})
	}
	return true
}

// value judges one value: secret as a whole, or holding secrets.
func (s *msgScan) value(path []string, parent *container, idx, start, end int) {
	m, rel := s.method, innerPath(path, s.hop)
	if s.batch {
		if len(path) == 0 {
			return
		}
		m, rel = s.memberMethod(path), path[1:]
	}
	str := s.body[start] == '"'
	if parent != nil && !parent.array {
		s.key(path, start)
	}
	if start < s.secretEnd {
		switch {
		case str && exemptKey(rel): // a name that is kept is still read
			s.text(path, start, end)
		case str:
			s.whole(path, start, end, s.secretRule)
		}
		return
	}
	rule := s.r.secretRule(m, rel)
	if rule == "" {
		rule = anywhereRule(rel)
	}
	if rule != "" {
		switch {
		case s.body[start] == '{' || s.body[start] == '[':
			s.secretEnd, s.secretRule = end, rule
		case str || strings.HasPrefix(rule, "path "): // scalars only when asked for by name
			s.whole(path, start, end, rule)
		}
		return
	}
	if !str {
		return
	}
	if parent != nil && !parent.array && len(rel) > 0 {
		s.member(path, parent.start, start, end)
	}
	if parent != nil && parent.array {
		s.element(path, idx, start, end)
	}
	s.text(path, start, end)
}

// memberMethod is the method of the batch member path[0].
func (s *msgScan) memberMethod(path []string) string {
	if s.batchM == nil {
		s.batchM = map[string]string{}
	}
	m, ok := s.batchM[path[0]]
	if !ok {
		m = batchMemberMethod(s.body, path, s.method)
		s.batchM[path[0]] = m
	}
	return m
}

// anywhereRule makes a value secret by its own key, in any message.
func anywhereRule(path []string) string {
	n := len(path)
	switch {
	case n == 0:
		return ""
	case n >= 3 && path[n-3] == "mcpServers" && (path[n-1] == "env" || path[n-1] == "headers"):
		return "mcpServers " + path[n-1]
	case credentialNameCached(path[n-1]):
		return "credential key"
	}
	return ""
}

// key redacts an object key that is itself a secret (a token used as a
// map key). Keys shorter than the shortest shape are skipped unread.
func (s *msgScan) key(path []string, valueStart int) {
	k := path[len(path)-1]
	if len(k) < 12 {
		return
	}
	spans := s.r.textSpans([]byte(k), false)
	if len(spans) == 0 {
		return
	}
	if ks, ke, ok := keyLiteral(s.body, valueStart); ok {
		s.edits = append(s.edits, Edit{ks, ke, redactedLiteral})
		s.report(path, ks, "object key: "+spanKinds(spans))
	}
}

// keyLiteral finds the key literal before the value at doc[v].
func keyLiteral(doc []byte, v int) (int, int, bool) {
	j := v - 1
	for j >= 0 && isJSONSpace(doc[j]) {
		j--
	}
	if j < 0 || doc[j] != ':' {
		return 0, 0, false
	}
	j--
	for j >= 0 && isJSONSpace(doc[j]) {
		j--
	}
	if j < 1 || doc[j] != '"' {
		return 0, 0, false
	}
	for k := j - 1; k >= 0; k-- {
		if doc[k] == '"' && !escapeLetter(doc, k) {
			return k, j + 1, true
		}
	}
	return 0, 0, false
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// member notes the parts of {name, value} pairs and "command" strings.
func (s *msgScan) member(path []string, obj, start, end int) {
	switch path[len(path)-1] {
	case "name":
		s.pair(obj).credential = credentialName(decodeString(s.body[start:end]))
	case "value":
		p := s.pair(obj)
		p.value = Edit{start, end, redactedLiteral}
		p.path = append([]string(nil), path...)
	case "command":
		if s.commands == nil {
			s.commands = map[int]string{}
		}
		s.commands[obj] = toolName([]byte(firstField(decodeString(s.body[start:end]))))
	}
}

func (s *msgScan) pair(obj int) *pairSlot {
	p := s.pairs[obj]
	if p == nil {
		p = &pairSlot{}
		if s.pairs == nil {
			s.pairs = map[int]*pairSlot{}
		}
		s.pairs[obj] = p
	}
	return p
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

func decodeString(lit []byte) string {
	var v string
	_ = json.Unmarshal(lit, &v)
	return v
}

// element keeps an array element that argvScan needs: flags, the element
// after a flag, tool names.
func (s *msgScan) element(path []string, idx, start, end int) {
	in := s.body[start+1 : end-1]
	arr := s.stack[len(s.stack)-1].start
	l := s.argv[arr]
	dash := len(in) > 0 && in[0] == '-'
	after := l != nil && l.dash && l.elems[len(l.elems)-1].idx == idx-1
	if !dash && !after && !programName(in) && string(in) != "login" {
		return
	}
	if l == nil {
		l = &argvList{start: arr, owner: -1}
		if n := len(s.stack); n >= 2 && !s.stack[n-2].array {
			l.owner = s.stack[n-2].start
		}
		if s.argv == nil {
			s.argv = map[int]*argvList{}
		}
		s.argv[arr] = l
	}
	l.elems = append(l.elems, argvElem{idx: idx, start: start + 1, end: end - 1, path: append([]string(nil), path...)})
	l.dash = dash
}

// text redacts the secrets inside one string literal.
func (s *msgScan) text(path []string, start, end int) {
	spans, whole := s.r.literalSpans(s.body[start:end])
	if whole != "" {
		s.whole(path, start, end, whole)
		return
	}
	for _, sp := range spans {
		with := sp.with
		if with == nil {
			with = []byte(Redacted)
		}
		s.edits = append(s.edits, Edit{start + 1 + sp.start, start + 1 + sp.end, with})
	}
	if len(spans) > 0 {
		s.report(path, start, spanKinds(spans))
	}
}

func (s *msgScan) whole(path []string, start, end int, rule string) {
	s.edits = append(s.edits, Edit{start, end, redactedLiteral})
	s.report(path, start, rule)
}

// finish settles pairs and argument arrays, in document order.
func (s *msgScan) finish() {
	pairs := make([]*pairSlot, 0, len(s.pairs))
	for _, p := range s.pairs {
		if p.credential && p.value.End > p.value.Start {
			pairs = append(pairs, p)
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].value.Start < pairs[j].value.Start })
	for _, p := range pairs {
		s.whole(p.path, p.value.Start, p.value.End, "credential name/value pair")
	}
	lists := make([]*argvList, 0, len(s.argv))
	for _, l := range s.argv {
		lists = append(lists, l)
	}
	sort.Slice(lists, func(i, j int) bool { return lists[i].start < lists[j].start })
	for _, l := range lists {
		scan := newArgvScan(s.commands[l.owner])
		for _, e := range l.elems {
			if st, en, rule, ok := scan.step(e.idx, s.body[e.start:e.end]); ok {
				s.edits = append(s.edits, Edit{e.start + st, e.start + en, []byte(Redacted)})
				s.report(e.path, e.start, rule)
			}
		}
	}
}

// report lists a redaction at body[at], one entry per path.
func (s *msgScan) report(path []string, at int, rule string) {
	p := s.r.safePath(path)
	if i, ok := s.where[p]; ok {
		if !strings.Contains(s.found[i].Rule, rule) {
			s.found[i].Rule += ", " + rule
		}
		return
	}
	if s.where == nil {
		s.where = map[string]int{}
	}
	s.where[p] = len(s.found)
	s.found = append(s.found, Redaction{Path: p, Rule: rule})
	s.at = append(s.at, at)
}

// safePath joins path for the list of redactions, with any secret in a
// key replaced: the list must never carry a value.
func (r *Redactor) safePath(path []string) string {
	p := PathString(path)
	if len(p) < 12 {
		return p
	}
	out, _ := r.Text([]byte(p))
	return string(out)
}

// mergeEdits sorts edits and joins overlapping ones: a string redacted
// whole swallows the spans found inside it.
func mergeEdits(edits []Edit) []Edit {
	if len(edits) < 2 {
		return edits
	}
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].Start != edits[j].Start {
			return edits[i].Start < edits[j].Start
		}
		return edits[i].End > edits[j].End
	})
	out := edits[:1]
	for _, e := range edits[1:] {
		last := &out[len(out)-1]
		if e.Start >= last.End {
			out = append(out, e)
			continue
		}
		if e.End > last.End { // two spans in one string overlap
			last.End = e.End
			last.With = []byte(Redacted)
		}
	}
	return out
}

// literalSpans finds the secrets inside a JSON string literal, on its
// exact bytes. Spans never cut an escape in two. A literal whose escapes
// (\u0041, \/) hide a secret from the exact bytes is redacted whole: whole
// names what was found.
func (r *Redactor) literalSpans(lit []byte) (spans []span, whole string) {
	in := lit[1 : len(lit)-1]
	spans = alignEscapes(in, r.textSpans(in, true))
	if bytes.Contains(in, []byte(`\u`)) || bytes.Contains(in, []byte(`\/`)) {
		if dec := decodeString(lit); dec != "" {
			if d := r.textSpans([]byte(dec), false); len(d) > len(spans) {
				return nil, spanKinds(d)
			}
		}
	}
	return spans, ""
}

// alignEscapes shrinks spans that begin or end inside an escape sequence
// so that the literal stays valid JSON.
func alignEscapes(b []byte, spans []span) []span {
	if len(spans) == 0 || bytes.IndexByte(b, '\\') < 0 {
		return spans
	}
	out := spans[:0]
	for _, sp := range spans {
		if s, e, ok := escapeAround(b, sp.start); ok && s < sp.start {
			sp.start = e
		}
		if s, _, ok := escapeAround(b, sp.end); ok && s < sp.end {
			sp.end = s
		}
		if sp.end > sp.start {
			out = append(out, sp)
		}
	}
	return out
}

// escapeAround returns the escape sequence b[s:e] with s <= i < e.
func escapeAround(b []byte, i int) (s, e int, ok bool) {
	for j := max(0, i-5); j <= i && j < len(b); j++ {
		if b[j] != '\\' || escapeLetter(b, j) {
			continue
		}
		n := 2
		if j+1 < len(b) && b[j+1] == 'u' {
			n = 6
		}
		if j <= i && i < j+n {
			return j, min(j+n, len(b)), true
		}
	}
	return 0, 0, false
}
