package capture

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// foldSearch finds a bare filter word in a record's bytes, ignoring case,
// in time linear in the bytes whatever the word: a Knuth–Morris–Pratt
// automaton run over the case-folded text. A naive search costs up to
// len(text)×len(word), which on a 200 MB record froze the inspector
// filtering as the user typed.
//
// It keeps the matching of the searches it replaced exactly:
//   - an ASCII word is compared with the raw bytes, folding ASCII letters
//     only (so "k" does not match the Kelvin sign);
//   - any other word is compared, lower-cased by bytes.ToLower, with the
//     text lower-cased the same way rune by rune (invalid UTF-8 becomes
//     U+FFFD), without copying the text.
//
// A foldSearch is immutable and safe for concurrent use.
type foldSearch struct {
	pat   []byte // the folded word
	fail  []int  // fail[k]: the longest proper border of pat[:k+1]
	ascii bool
}

func newFoldSearch(word string) *foldSearch {
	s := &foldSearch{ascii: isASCII(word)}
	if s.ascii {
		s.pat = []byte(word)
		for i, c := range s.pat {
			s.pat[i] = lowerASCII(c)
		}
	} else {
		s.pat = bytes.ToLower([]byte(word))
	}
	s.fail = kmpBorders(s.pat)
	return s
}

// kmpBorders returns the failure function of p.
func kmpBorders(p []byte) []int {
	fail := make([]int, len(p))
	k := 0
	for i := 1; i < len(p); i++ {
		for k > 0 && p[i] != p[k] {
			k = fail[k-1]
		}
		if p[i] == p[k] {
			k++
		}
		fail[i] = k
	}
	return fail
}

// in reports whether text holds the word.
func (s *foldSearch) in(text []byte) bool {
	found, _ := s.find(text)
	return found
}

// find reports whether text holds the word, and how many byte
// comparisons it took: never more than twice the folded text's length,
// which the tests hold it to.
func (s *foldSearch) find(text []byte) (found bool, work int) {
	if len(s.pat) == 0 {
		return true, 0
	}
	if s.ascii {
		return s.inASCII(text)
	}
	return s.inRunes(text)
}

// step advances the automaton from state q (bytes of pat matched) by the
// folded byte b, adding its comparisons to *work. q is below len(pat).
func (s *foldSearch) step(q int, b byte, work *int) int {
	for q > 0 && s.pat[q] != b {
		q = s.fail[q-1]
		*work++
	}
	*work++
	if s.pat[q] == b {
		q++
	}
	return q
}

func (s *foldSearch) inASCII(text []byte) (bool, int) {
	lo, up := s.pat[0], upperASCII(s.pat[0])
	nextLo, nextUp := -1, -1
	q, work := 0, 0
	for i := 0; i < len(text); i++ {
		if q == 0 {
			// Nothing matched yet: jump to the next first letter, in either
			// case, with the vectorised IndexByte.
			i = min(nextByte(text, i, lo, &nextLo), nextByte(text, i, up, &nextUp))
			if i == len(text) {
				return false, work
			}
		}
		if q = s.step(q, lowerASCII(text[i]), &work); q == len(s.pat) {
			return true, work
		}
	}
	return false, work
}

// nextByte returns the index of the first c in text at or after from, or
// len(text). *at caches the last answer, so that the scans for each byte
// only move forward and the total stays linear.
func nextByte(text []byte, from int, c byte, at *int) int {
	if *at < from {
		*at = len(text)
		if j := bytes.IndexByte(text[from:], c); j >= 0 {
			*at = from + j
		}
	}
	return *at
}

func (s *foldSearch) inRunes(text []byte) (bool, int) {
	var buf [utf8.UTFMax]byte
	q, work := 0, 0
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			if q = s.step(q, lowerASCII(c), &work); q == len(s.pat) {
				return true, work
			}
			i++
			continue
		}
		r, w := utf8.DecodeRune(text[i:])
		i += w
		for _, b := range buf[:utf8.EncodeRune(buf[:], unicode.ToLower(r))] {
			if q = s.step(q, b, &work); q == len(s.pat) {
				return true, work
			}
		}
	}
	return false, work
}

func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}
