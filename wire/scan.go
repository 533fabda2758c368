package wire

// The scanner below walks JSON that validJSON has already accepted (or,
// for an object, validates it as it goes). It
// never allocates and never copies: it only finds where values start and
// end, so classifying a 100 MiB frame costs one pass and no memory.

// members iterates over the members of a JSON object without allocating
// (a callback would make everything it touches escape to the heap, eight
// allocations per classified message). With validate set it checks the
// object as it goes, so classifying an object is a single pass; otherwise
// the object must already be known valid.
type members struct {
	obj        []byte // the object, or a buffer it starts in (open)
	i          int
	validate   bool
	open       bool // bytes may follow the object's closing brace
	depth      int  // the object's nesting depth, for validation's limit
	afterComma bool
	bad        bool   // validate found the object invalid
	end        int    // just past the closing brace, once next reports the end
	keyLit     []byte // the last key as written, quotes and escapes included
}

// newMembers iterates over obj, which is exactly one object.
func newMembers(obj []byte, validate bool) members {
	return members{obj: obj, i: skipSpace(obj, 1), validate: validate, depth: 1}
}

// innerMembers iterates over the object at b[start], a value inside an
// object at depth-1, so that a caller can read a member's members in the
// same pass that validates them.
func innerMembers(b []byte, start, depth int, validate bool) members {
	return members{obj: b, i: skipSpace(b, start+1), validate: validate, open: true, depth: depth}
}

// next returns the next member's key (unescaped only when it must be) and
// the exact bytes of its value. It reports false at the end of the object
// and, when validating, at the first invalid byte (setting bad).
func (m *members) next() (key, value []byte, ok bool) {
	key, start, ok := m.nextKey()
	if !ok {
		return nil, nil, false
	}
	end := 0
	if m.validate {
		end, ok = validValueAt(m.obj, start, m.depth)
	} else {
		end, ok = skipValue(m.obj, start), true
	}
	if !m.valueEnds(end, ok) {
		return nil, nil, false
	}
	return key, m.obj[start:end], true
}

// nextKey reads the next member's key and colon and returns where its
// value starts; the caller reads the value and passes its end to
// valueEnds. It reports false at the end of the object or an error.
func (m *members) nextKey() (key []byte, start int, ok bool) {
	obj, i := m.obj, m.i
	if i >= len(obj) || obj[i] == '}' {
		m.bad = m.validate && (i >= len(obj) || m.afterComma || (!m.open && i+1 != len(obj)))
		m.end = min(i+1, len(obj))
		return nil, 0, false
	}
	var keyEnd int
	if m.validate {
		if obj[i] != '"' {
			m.bad = true
			return nil, 0, false
		}
		if keyEnd, ok = validString(obj, i); !ok {
			m.bad = true
			return nil, 0, false
		}
	} else {
		keyEnd = skipString(obj, i)
	}
	m.keyLit = obj[i:keyEnd]
	key = obj[i+1 : keyEnd-1]
	if hasBackslash(key) {
		key = []byte(unquote(obj[i:keyEnd]))
	}
	i = skipSpace(obj, keyEnd)
	if m.validate && (i >= len(obj) || obj[i] != ':') {
		m.bad = true
		return nil, 0, false
	}
	return key, skipSpace(obj, i+1), true
}

// valueEnds moves past the value that ended at end (ok: it was valid) and
// the comma after it; it reports false, setting bad, when the object
// cannot go on from there.
func (m *members) valueEnds(end int, ok bool) bool {
	if !ok {
		m.bad = true
		return false
	}
	obj := m.obj
	i := skipSpace(obj, end)
	m.afterComma = i < len(obj) && obj[i] == ','
	if m.afterComma {
		i = skipSpace(obj, i+1)
	} else if m.validate && (i >= len(obj) || obj[i] != '}') {
		m.bad = true
		return false
	}
	m.i = i
	return true
}

// Members calls fn with each member of the valid JSON object obj: the key
// exactly as written (quotes and escapes included) and the exact bytes of
// its value, until fn returns false. Viewers print from it without
// re-encoding anything.
func Members(obj []byte, fn func(keyLit, value []byte) bool) {
	for it := newMembers(obj, false); ; {
		_, value, ok := it.next()
		if !ok || !fn(it.keyLit, value) {
			return
		}
	}
}

// Elements calls fn with the exact bytes of each element of the valid
// JSON array arr, until fn returns false.
func Elements(arr []byte, fn func(el []byte) bool) {
	stop := false
	forEachElement(arr, func(start, end int) {
		if !stop {
			stop = !fn(arr[start:end])
		}
	})
}

// Unquote decodes a JSON string literal; it returns "" for anything else.
func Unquote(lit []byte) string { return unquote(lit) }

// forEachMember calls fn with each member of the valid JSON object obj.
func forEachMember(obj []byte, fn func(key, value []byte)) {
	for it := newMembers(obj, false); ; {
		key, value, ok := it.next()
		if !ok {
			return
		}
		fn(key, value)
	}
}

// forEachElement calls fn with the span of each element of the valid JSON
// array arr.
func forEachElement(arr []byte, fn func(start, end int)) {
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := skipValue(arr, i)
		fn(i, end)
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string literal at b[i].
func skipString(b []byte, i int) int {
	for i++; ; i++ {
		i = plainRun(b, i)
		for i < len(b) && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) {
			return len(b)
		}
		if b[i] == '"' {
			return i + 1
		}
		i++ // the escaped byte
	}
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipNested skips a whole object or array, strings included.
func skipNested(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = skipString(b, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return len(b)
}
