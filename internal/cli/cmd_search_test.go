package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// importAt imports lines into dir as a capture that started at the
// first line's time, named name.
func importAt(t *testing.T, dir, name, lines string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), name+".jsonl")
	if err := os.WriteFile(src, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capture.Import(src, filepath.Join(dir, name+capture.Ext)); err != nil {
		t.Fatal(err)
	}
}

func TestSearch(t *testing.T) {
	dir := t.TempDir()
	importAt(t, dir, "older", `{"dir":"client","time":"2020-01-01T00:00:00Z","msg":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"find the Needle here"}]}}}
{"dir":"agent","time":"2020-01-01T00:00:01Z","msg":{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal"}}}
`)
	importAt(t, dir, "newer", `{"dir":"agent","time":"2025-01-01T00:00:00Z","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a needle\nin two lines"}}}}}
{"dir":"agent","time":"2025-01-01T00:00:01Z","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}}
`)
	if err := os.WriteFile(filepath.Join(dir, "20260101T000000Z-broken-1.acpscope"), bytes.Repeat([]byte("junk "), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		code    int
		lines   [][]string // stdout line by line: what each contains
		errText string
	}{
		{"a word, any case, newest capture first", []string{"needle"}, 0, [][]string{
			{`newer:1  2025-01-01 `, `← notification session/update agent_message_chunk  …`, `"text":"a needle\nin two lines"`},
			{`older:1  2020-01-01 `, `→ request session/prompt  …`, `find the Needle here`}}, "skipping 20260101T000000Z-broken-1"},
		{"words and filter terms", []string{"needle", "dir:client"}, 0, [][]string{{"older:1 "}}, ""},
		{"no text: the start of the body", []string{"kind:error"}, 0, [][]string{{`older:2 `, `← error session/prompt  {"jsonrpc":"2.0","id":1,"error":`}}, ""},
		{"exact text", []string{`"a needle"`}, 0, [][]string{{"newer:1 "}}, ""},
		{"no match", []string{"haystack"}, 1, nil, "no match in 3 captures in " + dir},
		{"bad pattern", []string{"method:x and ("}, 2, nil, "bad PATTERN at byte 14"},
		{"no pattern", nil, 2, nil, "give a PATTERN"},
		{"--open without a terminal", []string{"--open", "needle"}, 1, [][]string{{"newer:1 "}}, "the hit is newer:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"search", "--dir", dir}, tt.args...)...)
			var got []string
			if r.stdout != "" {
				got = strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			}
			if r.code != tt.code || !strings.Contains(r.stderr, tt.errText) || len(got) != len(tt.lines) {
				t.Fatalf("search %q: exit %d, %d lines\nstdout %q\nstderr %q\nwant exit %d, %d lines, stderr with %q",
					tt.args, r.code, len(got), r.stdout, r.stderr, tt.code, len(tt.lines), tt.errText)
			}
			for i, parts := range tt.lines {
				for _, p := range parts {
					if !strings.Contains(got[i], p) {
						t.Errorf("line %d %q lacks %q", i+1, got[i], p)
					}
				}
			}
		})
	}
}

func TestHitContext(t *testing.T) {
	long := strings.Repeat("x", 100) + "Needle" + strings.Repeat("y", 100)
	tests := []struct {
		name  string
		body  string
		terms []capture.TextTerm
		want  string
	}{
		{"around the word, any case", long, []capture.TextTerm{{Text: "needle"}},
			"…" + strings.Repeat("x", 30) + "Needle" + strings.Repeat("y", 60) + "…"},
		{"exact text is case-sensitive", "needle NEEDLE", []capture.TextTerm{{Text: "NEEDLE", Exact: true}}, "needle NEEDLE"},
		{"the first term found", "abc", []capture.TextTerm{{Text: "zzz"}, {Text: "B"}}, "abc"},
		{"no term: the start", long, nil, strings.Repeat("x", 90) + "…"},
		{"control bytes and bad UTF-8 escaped, quotes kept", "\"a\"\n\t\xff end", nil, `"a"\n\t\xff end`},
		{"never cuts a character", strings.Repeat("é", 40) + "needle", []capture.TextTerm{{Text: "needle"}}, "…" + strings.Repeat("é", 15) + "needle"},
		{"non-ASCII word", "ÉTÉ", []capture.TextTerm{{Text: "été"}}, "ÉTÉ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hitContext([]byte(tt.body), tt.terms); got != tt.want {
				t.Errorf("hitContext = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestProgress: quiet for a short search; on a terminal one line kept up
// to date and wiped before results; elsewhere a line now and then.
func TestProgress(t *testing.T) {
	for _, tt := range []struct {
		name string
		tty  bool
		at   []time.Duration // when report is called
		want string
	}{
		{"short: nothing", true, []time.Duration{0, 100 * time.Millisecond, 400 * time.Millisecond}, ""},
		{"terminal", true, []time.Duration{600 * time.Millisecond, 650 * time.Millisecond, 800 * time.Millisecond},
			"\r\033[Ksearching 1/3 captures, 0 hits: c0\r\033[K\r\033[Ksearching 3/3 captures, 2 hits: c2\r\033[K"},
		{"log", false, []time.Duration{time.Second, 6 * time.Second, 7 * time.Second},
			"acpscope search: 1 of 3 captures searched, 1 hits so far, searching c1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			start := time.Now()
			clock := start
			flushes := 0
			p := newProgress(&out, tt.tty, 3, func() { flushes++ })
			p.now = func() time.Time { return clock }
			p.start = start
			for i, at := range tt.at {
				clock = start.Add(at)
				p.report(i, i, fmt.Sprintf("c%d", i))
				p.clear() // a result is printed
			}
			if out.String() != tt.want {
				t.Errorf("progress wrote %q, want %q", out.String(), tt.want)
			}
			if draws := strings.Count(out.String(), " captures"); flushes != draws {
				t.Errorf("%d flushes for %d lines drawn: stdout must be flushed before each", flushes, draws)
			}
		})
	}
}
