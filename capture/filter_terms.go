package capture

// TextTerm is a free-text term of a filter: a bare word, matched
// ignoring case, or a quoted string, matched exactly.
type TextTerm struct {
	Text  string
	Exact bool
}

// TextTerms returns the filter's text terms that a match can contain, in
// the order written: those under a 'not' are left out, since a record
// that matches holds none of them. A search shows the context of these.
func (f *Filter) TextTerms() []TextTerm {
	if f == nil {
		return nil
	}
	var out []TextTerm
	var walk func(n filterNode)
	walk = func(n filterNode) {
		switch n := n.(type) {
		case *fAndNode:
			walk(n.l)
			walk(n.r)
		case *fOrNode:
			walk(n.l)
			walk(n.r)
		case *fTextNode:
			out = append(out, TextTerm{Text: n.text, Exact: n.exact})
		}
	}
	if f.root != nil {
		walk(f.root)
	}
	return out
}
