package inspector

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/rivo/tview"
)

// plain removes the colour tags prettyJSON adds and undoes tview's
// escaping of brackets, leaving the text a user reads.
var colourTag = regexp.MustCompile(`\[(?:aqua|green|yellow|fuchsia|orange|gray|-)\]`)

func plain(s string) string {
	return tview.Unescape(colourTag.ReplaceAllString(s, ""))
}

func TestPrettyJSON(t *testing.T) {
	img := strings.Repeat("iVBO", 1000)
	tests := []struct {
		name, in string
		expand   bool
		want     []string // fragments of the plain text
		not      []string
	}{
		{"key order and number spelling kept", `{"z":1.50,"a":1e3,"m":-0}`, false,
			[]string{"\"z\": 1.50,\n  \"a\": 1e3,\n  \"m\": -0"}, nil},
		{"string escapes kept", `{"s":"tab\tquote\"uni\u00e9"}`, false, []string{`"tab\tquote\"uni\u00e9"`}, nil},
		{"empty containers", `{"a":{},"b":[]}`, false, []string{`"a": {}`, `"b": []`}, nil},
		{"nested arrays", `[[1,[2]],{"k":[true,null]}]`, false, []string{"[\n  [\n    1,\n    [\n      2\n    ]\n  ],", `true,`, `null`}, nil},
		{"image blob folded", `{"type":"image","mimeType":"image/png","data":"` + img + `"}`, false,
			[]string{`"data": <image/png 2.9 KiB>`}, []string{"iVBOiVBO"}},
		{"image blob expanded", `{"type":"image","mimeType":"image/png","data":"` + img + `"}`, true,
			[]string{"iVBOiVBOiVBO"}, []string{"<image/png"}},
		{"resource blob", `{"resource":{"uri":"file:///a.bin","blob":"` + img + `"}}`, false,
			[]string{`"blob": <base64 2.9 KiB>`}, nil},
		{"error data is not media", `{"error":{"code":1,"data":"` + strings.Repeat("trace ", 30) + `"}}`, false,
			[]string{"trace trace"}, []string{"<base64"}},
		{"brackets in strings are not tags", `{"s":"[red]not a colour[-]"}`, false, []string{`"[red]not a colour[-]"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plain(prettyJSON([]byte(tt.in), tt.expand))
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("unexpected %q in:\n%s", n, got)
				}
			}
		})
	}
}

func TestPrettyJSONFoldsHugeDocuments(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; i < 5000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"i":1}`)
	}
	b.WriteString(`]}`)
	folded := prettyJSON([]byte(b.String()), false)
	if n := strings.Count(folded, "\n"); n > foldLines+2 {
		t.Fatalf("folded output has %d lines, want at most %d", n, foldLines+2)
	}
	if !strings.Contains(folded, "press x to expand") {
		t.Fatal("the fold does not say how to expand")
	}
	full := plain(prettyJSON([]byte(b.String()), true))
	var v any
	if err := json.Unmarshal([]byte(full), &v); err != nil {
		t.Fatalf("expanded output is not the whole document: %v", err)
	}
}

func TestPrettyJSONRejectsInvalid(t *testing.T) {
	if got := prettyJSON([]byte(`{"a":`), false); got != "" {
		t.Fatalf("invalid JSON rendered as %q; the raw view should be used", got)
	}
}

// FuzzPrettyJSON: any valid JSON renders without panicking and, expanded,
// reads back as the same document.
func FuzzPrettyJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2,{"b":null}]}`, `"x"`, `{"data":"QUJD","mimeType":"image/png"}`, `{"s":"[x]"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		out := prettyJSON([]byte(in), true)
		var a, b any
		if json.Unmarshal([]byte(in), &a) != nil {
			return
		}
		if err := json.Unmarshal([]byte(plain(out)), &b); err != nil {
			t.Fatalf("rendering of %q does not parse: %v\n%s", in, err, out)
		}
	})
}
