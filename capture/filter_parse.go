package capture

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// FilterError is a syntax error in a filter expression. Pos is the byte
// offset in the source where the problem was found.
type FilterError struct {
	Pos int
	Msg string
}

func (e *FilterError) Error() string {
	return fmt.Sprintf("filter: at byte %d: %s", e.Pos, e.Msg)
}

// ParseFilter parses a filter expression. The grammar is FilterGrammar.
// The empty expression (or all blanks) matches every record.
func ParseFilter(src string) (*Filter, error) {
	p := &filterParser{src: src, toks: lexFilter(src)}
	if p.peek().kind == tokEOF {
		return &Filter{src: src}, nil
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		if t.kind == tokRParen {
			return nil, p.errAt(t, "unbalanced ')': no '(' to close")
		}
		return nil, p.errAt(t, "expected 'and', 'or' or the end of the filter")
	}
	return &Filter{src: src, root: root}, nil
}

type filterTokKind uint8

const (
	tokEOF filterTokKind = iota
	tokWord
	tokQuoted
	tokLParen
	tokRParen
	tokBang
	tokBadQuote // an unterminated quoted string
)

type filterToken struct {
	kind filterTokKind
	pos  int
	text string // a word's text, a quoted string's decoded content
	// value is set on a word that ends in ':' or '=' and is followed at
	// once by a quoted string: `method:"a b"`, `params.x="a b"`.
	value    string
	hasValue bool
}

// isFilterBlank reports ASCII white space, the only separator besides
// parentheses and quotes. Working on bytes keeps any input, even invalid
// UTF-8, lexable.
func isFilterBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isFilterWordByte(c byte) bool {
	return !isFilterBlank(c) && c != '(' && c != ')' && c != '"'
}

func lexFilter(src string) []filterToken {
	var toks []filterToken
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case isFilterBlank(c):
			i++
		case c == '(':
			toks = append(toks, filterToken{kind: tokLParen, pos: i})
			i++
		case c == ')':
			toks = append(toks, filterToken{kind: tokRParen, pos: i})
			i++
		case c == '!':
			toks = append(toks, filterToken{kind: tokBang, pos: i})
			i++
		case c == '"':
			text, next, ok := lexFilterQuoted(src, i)
			if !ok {
				toks = append(toks, filterToken{kind: tokBadQuote, pos: i})
				return append(toks, filterToken{kind: tokEOF, pos: len(src)})
			}
			toks = append(toks, filterToken{kind: tokQuoted, pos: i, text: text})
			i = next
		default:
			start := i
			for i < len(src) && isFilterWordByte(src[i]) {
				i++
			}
			t := filterToken{kind: tokWord, pos: start, text: src[start:i]}
			last := src[i-1]
			if (last == ':' || last == '=') && i < len(src) && src[i] == '"' {
				text, next, ok := lexFilterQuoted(src, i)
				if !ok {
					toks = append(toks, filterToken{kind: tokBadQuote, pos: i})
					return append(toks, filterToken{kind: tokEOF, pos: len(src)})
				}
				t.value, t.hasValue, i = text, true, next
			}
			toks = append(toks, t)
		}
	}
	return append(toks, filterToken{kind: tokEOF, pos: len(src)})
}

// lexFilterQuoted reads the string literal starting at src[i] == '"'. A
// backslash makes the next byte literal.
func lexFilterQuoted(src string, i int) (text string, next int, ok bool) {
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if j+1 < len(src) {
				j++
				b.WriteByte(src[j])
			}
		case '"':
			return b.String(), j + 1, true
		default:
			b.WriteByte(src[j])
		}
	}
	return "", 0, false
}

type filterParser struct {
	src  string
	toks []filterToken
	i    int
}

func (p *filterParser) peek() filterToken { return p.toks[p.i] }
func (p *filterParser) next() filterToken { t := p.toks[p.i]; p.i++; return t }

func (p *filterParser) errAt(t filterToken, format string, args ...any) *FilterError {
	return &FilterError{Pos: t.pos, Msg: fmt.Sprintf(format, args...)}
}

func isFilterKeyword(t filterToken, kw string) bool {
	return t.kind == tokWord && !t.hasValue && strings.EqualFold(t.text, kw)
}

// parseOr: and ('or' and)*
func (p *filterParser) parseOr() (filterNode, error) {
	left, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for isFilterKeyword(p.peek(), "or") {
		p.next()
		right, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		left = &fOrNode{left, right}
	}
	return left, nil
}

// parseAnd: unary (['and'] unary)* — adjacency means and.
func (p *filterParser) parseAnd() (filterNode, error) {
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if isFilterKeyword(t, "and") {
			p.next()
		} else if !startsFilterOperand(t) {
			return left, nil
		}
		right, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		left = &fAndNode{left, right}
	}
}

func startsFilterOperand(t filterToken) bool {
	switch t.kind {
	case tokWord:
		return !isFilterKeyword(t, "or") && !isFilterKeyword(t, "and")
	case tokQuoted, tokLParen, tokBang, tokBadQuote:
		return true
	}
	return false
}

// parseUnary: ('not' | '!') unary | '(' or ')' | term
func (p *filterParser) parseUnary() (filterNode, error) {
	t := p.next()
	switch {
	case t.kind == tokBang || isFilterKeyword(t, "not"):
		inner, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &fNotNode{inner}, nil
	case t.kind == tokLParen:
		inner, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			return nil, p.errAt(c, "expected ')' to close the '(' at byte %d", t.pos)
		}
		return inner, nil
	case t.kind == tokQuoted:
		return &fTextNode{text: t.text, exact: true}, nil
	case t.kind == tokWord:
		if isFilterKeyword(t, "and") || isFilterKeyword(t, "or") {
			return nil, p.errAt(t, "expected a term before %q", t.text)
		}
		return parseFilterTerm(t)
	case t.kind == tokBadQuote:
		return nil, p.errAt(t, "unterminated quoted text: expected a closing '\"'")
	case t.kind == tokRParen:
		return nil, p.errAt(t, "expected a term, found ')'")
	}
	return nil, p.errAt(t, "expected a term at the end of the filter")
}

// filterFields lists the name:value terms, in the order help shows them.
var filterFields = []string{"method", "dir", "kind", "id", "session", "update", "flag", "conn", "hop", "mcp.method", "mcp.tool", "fault"}

func isFilterIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// isDottedField accepts the field names with a dot: mcp.method, mcp.tool.
func isDottedField(s string) bool {
	s = strings.ToLower(s)
	return s == "mcp.method" || s == "mcp.tool"
}

// parseFilterTerm turns one word into a term.
func parseFilterTerm(t filterToken) (filterNode, error) {
	word := t.text
	if strings.EqualFold(word, "error") && !t.hasValue {
		return &fKindNode{name: "error", kinds: filterKindSet("error")}, nil
	}
	if cmp, ok, err := parseFilterComparison(t); ok || err != nil {
		return cmp, err
	}
	if i := strings.IndexByte(word, ':'); i > 0 && (isFilterIdent(word[:i]) || isDottedField(word[:i])) {
		return parseFilterField(t, strings.ToLower(word[:i]), word[i+1:])
	}
	if i := strings.IndexByte(word, '='); i > 0 && isFilterPath(word[:i]) {
		val := word[i+1:]
		if t.hasValue {
			val = t.value
		} else if val == "" {
			return nil, &FilterError{Pos: t.pos + len(word), Msg: fmt.Sprintf("expected a value after %q", word)}
		}
		return &fPathNode{path: strings.Split(word[:i], "."), value: val}, nil
	}
	if t.hasValue {
		// `x:"…"` with a word that is no field: say so rather than guess.
		return nil, &FilterError{Pos: t.pos, Msg: fmt.Sprintf("expected a field name before the quoted value, found %q", word)}
	}
	return newWordNode(word), nil
}

// isFilterPath accepts a JSON path of member names and array indexes joined by
// dots, starting with a name: params.update.sessionUpdate, result.x.0.
func isFilterPath(s string) bool {
	segs := strings.Split(s, ".")
	for i, seg := range segs {
		if seg == "" {
			return false
		}
		for j := 0; j < len(seg); j++ {
			c := seg[j]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '-' || c >= '0' && c <= '9') {
				return false
			}
		}
		if i == 0 && seg[0] >= '0' && seg[0] <= '9' {
			return false
		}
	}
	return true
}

func parseFilterField(t filterToken, name, val string) (filterNode, error) {
	valPos := t.pos + len(name) + 1
	if t.hasValue {
		val = t.value
	} else if val == "" {
		return nil, &FilterError{Pos: valPos, Msg: fmt.Sprintf("expected a value after %s: (%s)", name, filterFieldHint(name))}
	}
	bad := func(format string, args ...any) error {
		return &FilterError{Pos: valPos, Msg: fmt.Sprintf(format, args...)}
	}
	switch name {
	case "method":
		return newMethodNode(val), nil
	case "hop":
		n, err := strconv.ParseUint(val, 10, 8)
		if err != nil {
			return nil, bad("expected a proxy-chain hop, e.g. hop:1 (0: not wrapped); found %q", val)
		}
		return &fHopNode{hop: uint8(n)}, nil
	case "mcp.method":
		return &fMCPNode{field: name, pattern: val}, nil
	case "mcp.tool":
		return &fMCPNode{field: name, pattern: val}, nil
	case "fault":
		return &fFaultNode{pattern: strings.ToLower(val)}, nil
	case "update":
		return &fUpdateNode{pattern: val}, nil
	case "session":
		return &fSessionNode{prefix: val}, nil
	case "id":
		return &fIdNode{id: val}, nil
	case "dir":
		d, ok := parseFilterDir(val)
		if !ok {
			return nil, bad("unknown direction %q: expected client or agent", val)
		}
		return &fDirNode{dir: d}, nil
	case "kind":
		ks := filterKindSet(strings.ToLower(val))
		if ks == 0 {
			return nil, bad("unknown kind %q: expected %s", val, filterFieldHint("kind"))
		}
		return &fKindNode{name: strings.ToLower(val), kinds: ks}, nil
	case "conn":
		n, err := strconv.ParseUint(val, 10, 32)
		if err != nil {
			return nil, bad("expected a connection number, e.g. conn:0; found %q", val)
		}
		return &fConnNode{conn: uint32(n)}, nil
	case "flag":
		f, ok := wire.ParseFlag(strings.ToLower(val))
		if !ok {
			return nil, bad("unknown flag %q: expected %s", val, filterFieldHint("flag"))
		}
		return &fFlagNode{flag: f, name: strings.ToLower(val)}, nil
	}
	return nil, &FilterError{Pos: t.pos, Msg: fmt.Sprintf("unknown field %q: expected one of %s:, or quote the text to search for it",
		name, strings.Join(filterFields, ":, "))}
}

func filterFieldHint(name string) string {
	switch name {
	case "dir":
		return "client or agent"
	case "kind":
		return "request, notification, response, error, batch, stderr, invalid-json, invalid-utf8, nonprotocol, or invalid for any of the last three"
	case "flag":
		var names []string
		for f := wire.Flags(1); f != 0 && f <= wire.FlagAfterExit; f <<= 1 {
			names = append(names, f.Names()...)
		}
		return strings.Join(names, ", ")
	case "method":
		return "a method name, * matches anything, e.g. session/*"
	case "update":
		return "a sessionUpdate variant, e.g. agent_message_chunk"
	case "id":
		return "a request id, e.g. 7"
	case "session":
		return "a sessionId or its prefix"
	case "conn":
		return "a connection number, e.g. 0"
	case "hop":
		return "a proxy-chain hop, e.g. 1"
	case "mcp.method":
		return "an MCP method carried by mcp/message, e.g. tools/call"
	case "mcp.tool":
		return "the name of the tool an MCP tools/call calls"
	case "fault":
		return "* for any message acpscope altered, or an action (drop, delay, …), a stage (dropped, replaced, forwarded, injected), who (plan, intercept, send) or a rule's name"
	}
	return "a value"
}

func parseFilterDir(s string) (wire.Dir, bool) {
	switch strings.ToLower(s) {
	case "client", "editor":
		return wire.DirClient, true
	case "agent":
		return wire.DirAgent, true
	}
	return 0, false
}

// filterKindSet maps a kind name to the set of wire kinds it stands for.
func filterKindSet(name string) uint32 {
	bit := func(k wire.Kind) uint32 { return 1 << k }
	switch name {
	case "invalid":
		return bit(wire.KindInvalidJSON) | bit(wire.KindInvalidUTF8) | bit(wire.KindNonProtocol)
	case "nonprotocol":
		return bit(wire.KindNonProtocol)
	}
	if k, ok := wire.ParseKind(name); ok && k != wire.KindUnknown {
		return bit(k)
	}
	return 0
}
