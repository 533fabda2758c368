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
	deep := strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20)
	if !validJSON([]byte(deep)) {
		t.Error("a million nested arrays are valid JSON")
	}
	if validJSON([]byte(strings.Repeat("[", 1<<20))) {
		t.Error("unclosed arrays accepted")
	}
}

// FuzzValidJSON holds validJSON to encoding/json.Valid on valid UTF-8
// (Classify rejects invalid UTF-8 before validating).
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\"y",true,null,{}]}`, `[`, `"\ud800"`, `-01`, `{"":""}`} {
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
// stride, and holds the verdict to encoding/json's.
func TestValidStringEveryAlignment(t *testing.T) {
	for _, special := range []string{`"`, `\\`, `\"`, `\u00e9`, `\x`, "\x01", "\x1f", "é", "\x7f"} {
		for n := 0; n < 24; n++ {
			for pos := 0; pos <= n; pos++ {
				s := `{"k":"` + strings.Repeat("a", pos) + special + strings.Repeat("b", n-pos) + `"}`
				if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
					t.Fatalf("validJSON(%q) = %v, encoding/json says %v", s, got, want)
				}
			}
		}
	}
}
