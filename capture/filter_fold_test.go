package capture

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/protocol"
)

// containsFoldOld is the bare-word search foldSearch replaced, kept as the
// reference it must agree with: ASCII words compared byte by byte folding
// ASCII letters, other words by bytes.ToLower on both sides.
func containsFoldOld(text []byte, word string) bool {
	if !isASCII(word) {
		return bytes.Contains(bytes.ToLower(text), bytes.ToLower([]byte(word)))
	}
	n := len(word)
	if n == 0 {
		return true
	}
	for i := 0; i+n <= len(text); i++ {
		j := 0
		for j < n && lowerASCII(text[i+j]) == lowerASCII(word[j]) {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func TestFoldSearchAgreesWithOld(t *testing.T) {
	tests := []struct {
		text, word string
		want       bool
	}{
		{"", "", true},
		{"abc", "", true},
		{"", "a", false},
		{"Hello World", "hello", true},
		{"Hello World", "WORLD", true},
		{"Hello World", "world!", false},
		{"ab", "abc", false},
		// Periodic words, where a naive restart and a wrong border both fail.
		{"aaab", "aab", true},
		{"abaabab", "abab", true},
		{"abaabaab", "abaaba", true},
		{"AaAaAaAb", "aaab", true},
		{"aaaaaaaa", "aaaab", false},
		{"abcabcabd", "ABCABD", true},
		{"xyz" + strings.Repeat("a", 300) + "b", strings.Repeat("A", 200) + "B", true},
		// ASCII words fold ASCII letters only, on the raw bytes.
		{"\u212aelvin", "kelvin", false}, // Kelvin sign
		{"\u0130stanbul", "istanbul", false},
		{"caf\u00c9", "cafe", false},
		{"a@b", "A@B", true},
		{"[\\]", "{|}", false}, // bytes 0x20 apart that are no letters
		// Other words lower-case both sides rune by rune.
		{"\u212aelvin", "\u212aelvin", true},
		{"kelvin", "\u212aelvin", true},
		{"KELVIN", "\u212aelvin", true},
		{"\u0130stanbul", "\u0130stanbul", true},
		{"istanbul", "\u0130stanbul", true},
		{"CAFÉ", "café", true},
		{"café", "CAFÉ", true},
		{"cafe\u0301", "café", false}, // no normalisation
		{"ΣΊΣΥΦΟΣ", "σίσυφος", false}, // final sigma is its own letter
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ", true},
		{"GRÜSSE", "grüße", false},
		{"Ǆ", "ǆ", true},
		{"ǅ", "ǆ", true}, // title case lowers too
		// Invalid UTF-8 reads as U+FFFD on both sides.
		{"a\xffb", "a\ufffdb", true},
		{"a\ufffdb", "a\xffb", true},
		{"a\xc3b", "\xc3", true},
		{"\xe2\x84k", "\ufffdk", true}, // a cut-off Kelvin sign
		{"\xe2\x84\xaa", "\ufffd", false},
		{"\xe2\x84\xaa", "k", false},
		// A word's bytes inside another rune's encoding.
		{"é", "\xa9", false},
		{"é", "\xc3\xa9", true},
		{"Éé", "éÉ", true},
		{"ÀÁÂ", "áâ", true},
		{strings.Repeat("ä", 100) + "b", strings.Repeat("Ä", 50) + "B", true},
		{strings.Repeat("ä", 100), strings.Repeat("Ä", 50) + "B", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q in %q", tt.word, tt.text), func(t *testing.T) {
			old := containsFoldOld([]byte(tt.text), tt.word)
			got := newFoldSearch(tt.word).in([]byte(tt.text))
			if old != tt.want {
				t.Fatalf("the old search says %v, the table %v: fix the table", old, tt.want)
			}
			if got != old {
				t.Fatalf("found = %v, the old search said %v", got, old)
			}
		})
	}
}

func TestFilterWordMatchesFolded(t *testing.T) {
	tests := []struct {
		expr, body string
		want       bool
	}{
		{"WORLD", `{"text":"hello world"}`, true},
		{"café", `{"text":"CAFÉ au lait"}`, true},
		{"kelvin", `{"text":"` + "\u212a" + `elvin"}`, false},
		{"hello not world", `{"text":"hello world"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			f, err := ParseFilter(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Match(&Record{Msg: protocol.Msg{Body: []byte(tt.body)}}, nil); got != tt.want {
				t.Fatalf("Match(%s) = %v, want %v", tt.body, got, tt.want)
			}
		})
	}
}

// TestFoldSearchIsLinear holds the search to at most two comparisons per
// folded byte of text, on the inputs where a naive search does
// len(text)×len(word): text that almost matches everywhere.
func TestFoldSearchIsLinear(t *testing.T) {
	const size = 1 << 20
	tests := []struct {
		name string
		text []byte
		word func(n int) string
	}{
		{"ascii", bytes.Repeat([]byte("a"), size), func(n int) string { return strings.Repeat("A", n-1) + "b" }},
		{"ascii periodic", bytes.Repeat([]byte("Ab"), size/2), func(n int) string { return strings.Repeat("aB", n/2) + "c" }},
		{"unicode", bytes.Repeat([]byte("ä"), size/2), func(n int) string { return strings.Repeat("Ä", n/2) + "b" }},
		{"invalid utf-8", bytes.Repeat([]byte("\xff"), size), func(n int) string { return strings.Repeat("\ufffd", n/3) + "x" }},
	}
	for _, tt := range tests {
		for _, n := range []int{11, 101, 1001} {
			t.Run(fmt.Sprintf("%s/word=%d", tt.name, n), func(t *testing.T) {
				word := tt.word(n)
				found, work := newFoldSearch(word).find(tt.text)
				if found {
					t.Fatalf("found %q, which is not there", word)
				}
				folded := len(tt.text)
				if !isASCII(word) {
					folded = len(bytes.ToLower(tt.text))
				}
				if work > 2*folded {
					t.Fatalf("%d comparisons for %d folded bytes and a %d-byte word: the search is not linear", work, folded, len(word))
				}
			})
		}
	}
}

// TestFilterWordCopiesNoBody: a word with a non-ASCII letter once made
// every match copy the whole body to lower-case it.
func TestFilterWordCopiesNoBody(t *testing.T) {
	body := bytes.Repeat([]byte(`{"text":"hello"}`), 1<<12)
	allocs := func(expr string) float64 {
		f, err := ParseFilter(expr)
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(20, func() {
			if f.Match(&Record{Msg: protocol.Msg{Body: body}}, nil) {
				t.Fatalf("%s matched %d bytes that do not hold it", expr, len(body))
			}
		})
	}
	if ascii, other := allocs("absent"), allocs("absänt"); other > ascii {
		t.Fatalf("a match on a non-ASCII word allocates %v times, an ASCII one %v: it copies the body", other, ascii)
	}
}

func FuzzFoldSearch(f *testing.F) {
	for _, s := range [][2]string{
		{"Hello World", "WORLD"}, {"aaab", "aab"}, {"abaabab", "abab"},
		{"\u212aelvin", "kelvin"}, {"kelvin", "\u212a"}, {"a\xffb", "a\ufffdb"},
		{"\xe2\x84k", "\ufffdk"}, {"CAFÉ", "café"}, {"\u0130", "i"}, {"é", "\xa9"},
	} {
		f.Add([]byte(s[0]), s[1])
	}
	f.Fuzz(func(t *testing.T, text []byte, word string) {
		if got, want := newFoldSearch(word).in(text), containsFoldOld(text, word); got != want {
			t.Fatalf("%q in %q: found = %v, the reference says %v", word, text, got, want)
		}
	})
}

// BenchmarkFoldSearch searches a 4 MiB record for words of 10, 100 and
// 1,000 bytes that almost match everywhere: the naive search's worst case,
// beside it as the baseline. The folded search's ns/op stays flat as the
// word grows; the naive one's grows with it. "json" searches a plain
// record for a word that is not there.
func BenchmarkFoldSearch(b *testing.B) {
	const size = 4 << 20
	texts := map[string][]byte{
		"ascii":   bytes.Repeat([]byte("a"), size),
		"unicode": bytes.Repeat([]byte("ä"), size/2),
	}
	var json []byte
	for i := 0; len(json) < size; i++ {
		json = append(json, line200(i)...)
	}
	texts["json"] = json
	words := map[string]func(n int) string{
		"ascii":   func(n int) string { return strings.Repeat("A", n-1) + "b" },
		"unicode": func(n int) string { return strings.Repeat("Ä", n/2-1) + "b" },
		"json":    func(n int) string { return "Session" + strings.Repeat("x", n-8) + "!" },
	}
	for _, kind := range []string{"ascii", "unicode", "json"} {
		for _, n := range []int{10, 100, 1000} {
			text, word := texts[kind], words[kind](n)
			s := newFoldSearch(word)
			b.Run(fmt.Sprintf("%s/word=%d/folded", kind, n), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					if s.in(text) {
						b.Fatal("found a word that is not there")
					}
				}
			})
			b.Run(fmt.Sprintf("%s/word=%d/naive", kind, n), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					if containsFoldOld(text, word) {
						b.Fatal("found a word that is not there")
					}
				}
			})
		}
	}
}
