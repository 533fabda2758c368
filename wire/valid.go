package wire

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// validJSON reports whether b is exactly one JSON value (RFC 8259), with
// surrounding white space allowed. It agrees with encoding/json.Valid (a
// fuzz target holds it to that) but runs several times faster, because
// classifying every frame on the capture path is where a busy proxy spends
// its CPU: strings, most of any ACP message, are skipped with
// bytes.IndexByte-style tight loops rather than a state machine per byte.
// It is iterative, so a 100 MiB line of "[" cannot overflow the stack.
func validJSON(b []byte) bool {
	i, ok := validValueAt(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

// maxDepth is encoding/json's nesting limit. Going deeper would make
// Classify call a message valid that every Go peer (and the redactor,
// which decodes with encoding/json) rejects.
const maxDepth = 10000

// validValueAt validates the value starting at b[i], inside depth
// enclosing containers, and returns the index just past it. Containers
// are tracked on an explicit stack of closers.
func validValueAt(b []byte, i, depth int) (int, bool) {
	var stackBuf [64]byte
	stack := stackBuf[:0]
	for {
		// A value is expected at b[i].
		if i >= len(b) {
			return i, false
		}
		var ok bool
		if (b[i] == '{' || b[i] == '[') && depth+len(stack) >= maxDepth {
			return i, false // this container would be one level too deep
		}
		switch c := b[i]; {
		case c == '{':
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			stack = append(stack, '}')
			if i, ok = validKey(b, i); !ok {
				return i, false
			}
			continue
		case c == '[':
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			stack = append(stack, ']')
			continue
		case c == '"':
			if i, ok = validString(b, i); !ok {
				return i, false
			}
		case c == 't':
			if i, ok = validLiteral(b, i, "true"); !ok {
				return i, false
			}
		case c == 'f':
			if i, ok = validLiteral(b, i, "false"); !ok {
				return i, false
			}
		case c == 'n':
			if i, ok = validLiteral(b, i, "null"); !ok {
				return i, false
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if i, ok = validNumber(b, i); !ok {
				return i, false
			}
		default:
			return i, false
		}
		// A value ended at i: close containers or move to the next member.
		for {
			if len(stack) == 0 {
				return i, true
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			closer := stack[len(stack)-1]
			if b[i] == closer {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipSpace(b, i+1)
			if closer == '}' {
				if i, ok = validKey(b, i); !ok {
					return i, false
				}
			}
			break
		}
	}
}

// validKey validates `"key" :` and returns the index of the value after it.
func validKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	i, ok := validString(b, i)
	if !ok {
		return i, false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return skipSpace(b, i+1), true
}

// validString validates the string literal at b[i] (its opening quote).
// UTF-8 validity is the caller's concern: Classify checks it for the whole
// frame first.
func validString(b []byte, i int) (int, bool) {
	i++
	for {
		i = plainRun(b, i)
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			n, ok := validEscape(b, i)
			if !ok {
				return i, false
			}
			i += n
		default: // a control character
			return i, false
		}
	}
}

// validEscape validates the escape sequence at b[i] (its backslash) and
// returns its length.
func validEscape(b []byte, i int) (int, bool) {
	if i+1 >= len(b) {
		return 0, false
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		if i+5 < len(b) && isHex(b[i+2]) && isHex(b[i+3]) && isHex(b[i+4]) && isHex(b[i+5]) {
			return 6, true
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// validNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		start := i + 1
		if i = skipDigits(b, start); i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		if i = skipDigits(b, start); i == start {
			return i, false
		}
	}
	return i, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// SWAR constants: a byte-wise test over eight bytes at once.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// plainRun skips, eight bytes at a time, the run of string bytes from
// b[i] that need no attention: no quote, no backslash, no control
// character. It returns the index of the first byte that does, or where
// fewer than eight bytes remain. Most of any ACP message is string bytes
// (text, base64), and this is where classifying spends its time. A run
// longer than longRun goes on in longPlainRun.
func plainRun(b []byte, i int) int {
	long := i + longRun
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		// hasless(x, 0x20) and haszero(x ^ c): borrows can only flag
		// bytes above a true match, so the lowest flag is exact.
		less := (x - swarOnes*0x20) &^ x
		q := x ^ (swarOnes * '"')
		bs := x ^ (swarOnes * '\\')
		quote := (q - swarOnes) &^ q
		slash := (bs - swarOnes) &^ bs
		if m := (less | quote | slash) & swarHighs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		if i += 8; i >= long {
			return longPlainRun(b, i)
		}
	}
	return i
}

// longPlainRun is plainRun for a long run (base64, padding, a big text
// without escapes): the quote or backslash that ends it is found with
// bytes.IndexByte, which the runtime does with vector instructions,
// leaving only control characters to look for here. It looks in windows
// that double from longRun: the quote that ends the string may be
// megabytes away, past many backslashes, each of which ends a run.
func longPlainRun(b []byte, i int) int {
	for window := 4 * longRun; ; window = min(2*window, 64<<10) {
		w := b[i:min(len(b), i+window)]
		end := bytes.IndexByte(w, '"')
		if end < 0 {
			end = len(w)
		}
		if bs := bytes.IndexByte(w[:end], '\\'); bs >= 0 {
			end = bs
		}
		if j := controlRun(w[:end], 0); j < len(w) || i+j == len(b) {
			return i + j
		}
		i += len(w)
	}
}

// longRun is how far plainRun looks eight bytes at a time before it
// takes the run for a long one. Text with an escape every line (code in
// a tool's output) seldom has longer runs, and is classified as fast as
// before: BenchmarkClassify's lines-1MiB, with one every 100 bytes.
const longRun = 128

// controlRun returns the index of the first control character in b from
// i, or len(b).
func controlRun(b []byte, i int) int {
	for ; i+16 <= len(b); i += 16 {
		x, y := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
		if ((x-swarOnes*0x20)&^x|(y-swarOnes*0x20)&^y)&swarHighs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return i
}
