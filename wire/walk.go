package wire

import (
	"errors"
	"strconv"
)

// ErrNotJSON is returned by Walk for bytes that are not one valid JSON
// value.
var ErrNotJSON = errors.New("not valid JSON")

// Walk calls visit for every value of the JSON document doc, depth first
// and in document order, with its path (object keys unescaped, array
// indexes in decimal) and its span doc[start:end]. visit returns false to
// skip a container's children. The path slice is valid only during the
// call. Redaction and identifier rebinding use the spans to splice single
// values into a message's exact bytes instead of re-encoding it.
func Walk(doc []byte, visit func(path []string, start, end int) bool) error {
	if !validJSON(doc) {
		return ErrNotJSON
	}
	i := skipSpace(doc, 0)
	walkValue(doc, i, skipValue(doc, i), nil, visit)
	return nil
}

// walkValue visits the value doc[i:end] and its children. A child's path
// extends its parent's in place (siblings reuse the same slot): visit may
// use path only during its call, and copying it at every level would cost
// memory in the square of the depth. Each child's end comes from the scan
// of its parent's members: finding it again cost a pass over the child
// at every level, five over a 200 MB file read.
func walkValue(doc []byte, i, end int, path []string, visit func([]string, int, int) bool) {
	if !visit(path, i, end) {
		return
	}
	switch doc[i] {
	case '{':
		forEachMember(doc[i:end], func(key, value []byte) {
			start := i + (cap(doc[i:end]) - cap(value)) // value's offset within doc
			walkValue(doc, start, start+len(value), append(path, string(key)), visit)
		})
	case '[':
		n := 0
		forEachElement(doc[i:end], func(s, e int) {
			walkValue(doc, i+s, i+e, append(path, strconv.Itoa(n)), visit)
			n++
		})
	}
}
