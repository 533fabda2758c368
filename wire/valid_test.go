package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestValidJSON(t *testing.T) {
	tests := []string{
		`{}`, `[]`, ` {"a":1} `, `{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, `-0.5e+10`, `0`, `"x"`, `true`,
		`[[[[]]]]`, `{"a":{}}`, "\t[1 , 2]\r\n",
		// invalid
		``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{a:1}`, `01`, `1.`, `.5`, `1e`, `-`,
		`"\x"`, `"\u12"`, "\"a\x01\"", `tru`, `nul`, `[1 2]`, `{"a":1 "b":2}`, `{}{}`, `[}`, `{]`, `"unterminated`,
		`{"a":1}}`, `[1]]`, `+1`, `NaN`, `1e+`, `{"a" 1}`,
	}
	for _, s := range tests {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%q) = %v, encoding/json says %v", s, got, want)
		}
	}
}

func TestValidJSONDeepNesting(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1, 1 << 20} {
		deep := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		if got, want := validJSON(deep), json.Valid(deep); got != want {
			t.Errorf("%d nested arrays: validJSON %v, encoding/json %v", depth, got, want)
		}
	}
	if validJSON([]byte(strings.Repeat("[", 1<<20))) {
		t.Error("unclosed arrays accepted")
	}
}

// FuzzValidJSON holds validJSON to encoding/json.Valid on valid UTF-8
// (Classify rejects invalid UTF-8 before validating).
func FuzzValidJSON(f *testing.F) {
	long := strings.Repeat("x", 2*longRun) // past the run plainRun takes for a long one
	for _, s := range []string{`{"a":[1,2.5e3,"x\"y",true,null,{}]}`, `[`, `"\ud800"`, `-01`, `{"":""}`,
		`["` + long + `\n` + long + `"]`, `"` + long + "\x01" + long + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !bytes.Equal(b, bytes.ToValidUTF8(b, nil)) {
			return
		}
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// TestValidStringEveryAlignment puts each character the string scanner
// must stop at in every position of strings longer than its eight-byte
// stride and than the run it takes for a long one (longRun), and holds
// the verdict to encoding/json's; where the string is valid, skipString
// must find its end where validString does.
func TestValidStringEveryAlignment(t *testing.T) {
	for _, special := range []string{`"`, `\\`, `\"`, `\u00e9`, `\x`, "\x01", "\x1f", "é", "\x7f"} {
		for n := 0; n < longRun+40; n++ {
			for pos := 0; pos <= n; pos++ {
				s := `{"k":"` + strings.Repeat("a", pos) + special + strings.Repeat("b", n-pos) + `"}`
				if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
					t.Fatalf("validJSON(%q) = %v, encoding/json says %v", s, got, want)
				}
				if end, ok := validString([]byte(s), 5); ok && skipString([]byte(s), 5) != end {
					t.Fatalf("skipString(%q) = %d, validString ends it at %d", s, skipString([]byte(s), 5), end)
				}
			}
		}
	}
}

// TestValidStringLongRuns puts each character the string scanner must
// stop at in a long string, at places around the edges of the windows a
// long run is searched in, and holds the verdict to encoding/json's.
func TestValidStringLongRuns(t *testing.T) {
	var places []int
	for edge, window := longRun, 4*longRun; edge < 200<<10; edge, window = edge+window, min(2*window, 64<<10) {
		for d := -3; d <= 3; d++ {
			places = append(places, edge+d)
		}
	}
	for _, special := range []string{`"`, `\\`, `\"`, `\x`, "\x01", "é"} {
		for _, pos := range places {
			s := `{"k":"` + strings.Repeat("a", pos) + special + strings.Repeat("b", 70) + `"}`
			if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
				t.Fatalf("validJSON of a string with %q at %d = %v, encoding/json says %v", special, pos, got, want)
			}
		}
	}
}

func TestValidJSONDepthLimitObjects(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		deep := []byte(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
		if got, want := validJSON(deep), json.Valid(deep); got != want {
			t.Errorf("%d nested objects: validJSON %v, encoding/json %v", depth, got, want)
		}
		empty := []byte(strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1))
		if got, want := validJSON(empty), json.Valid(empty); got != want {
			t.Errorf("%d nested objects ending empty: validJSON %v, encoding/json %v", depth, got, want)
		}
	}
}
