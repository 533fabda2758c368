package wire

// The scanner below walks JSON that validJSON has already accepted. It
// never allocates and never copies: it only finds where values start and
// end, so classifying a 100 MiB frame costs one pass and no memory.

// forEachMember calls fn with each key (unescaped only when it must be)
// and the exact bytes of its value, for the valid JSON object obj. It
// always reports true, to share forEachValidMember's signature.
func forEachMember(obj []byte, fn func(key, value []byte)) bool {
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] != '}' {
		keyEnd := skipString(obj, i)
		key := obj[i+1 : keyEnd-1]
		if hasBackslash(key) {
			key = []byte(unquote(obj[i:keyEnd]))
		}
		i = skipSpace(obj, keyEnd)
		i = skipSpace(obj, i+1) // the colon
		end := skipValue(obj, i)
		fn(key, obj[i:end])
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return true
}

// forEachValidMember is forEachMember for an object not yet validated: it
// validates each key and value as it goes and reports whether obj is
// exactly one valid JSON object. fn may have been called for the members
// before the first invalid byte.
func forEachValidMember(obj []byte, fn func(key, value []byte)) bool {
	i := skipSpace(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return i+1 == len(obj)
	}
	for {
		keyEnd, ok := validString(obj, i)
		if !ok || i >= len(obj) || obj[i] != '"' {
			return false
		}
		key := obj[i+1 : keyEnd-1]
		if hasBackslash(key) {
			key = []byte(unquote(obj[i:keyEnd]))
		}
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		end, ok := validValue(obj, start)
		if !ok {
			return false
		}
		fn(key, obj[start:end])
		i = skipSpace(obj, end)
		switch {
		case i >= len(obj):
			return false
		case obj[i] == '}':
			return i+1 == len(obj)
		case obj[i] != ',':
			return false
		}
		i = skipSpace(obj, i+1)
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
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
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
