package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
)

// TestLintCommand imports a real acp-devtools export into a capture and
// lints it end to end: records read back with their bytes, converted,
// linted, filtered and printed.
func TestLintCommand(t *testing.T) {
	src := filepath.Join("..", "shared", "fixtures", "acp-devtools-handshakes", "gemini-cli-0.46.0.json")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("fixture absent (it lives in ../shared/fixtures beside the repository): %v", err)
	}
	path := filepath.Join(t.TempDir(), "gemini.acpscope")
	importCapture(t, src, path)
	tests := []struct {
		name      string
		flags     lintFlags
		wantCode  int
		wantRules []string
	}{
		{"all", lintFlags{format: "json", noSave: true}, 1, []string{"acp/not-initialized", "acp/session-not-ready"}},
		{"warnings only", lintFlags{format: "json", noSave: true, min: protocol.Warning}, 1, []string{"acp/not-initialized", "acp/session-not-ready"}},
		{"errors only", lintFlags{format: "json", noSave: true, min: protocol.Error}, 1, []string{"acp/session-not-ready"}},
		{"other session", lintFlags{format: "json", noSave: true, session: "nope"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code, err := lintCapture(&out, &errOut, path, tt.flags, nil)
			if err != nil || code != tt.wantCode {
				t.Fatalf("code %d err %v, want %d; stderr %s", code, err, tt.wantCode, errOut.String())
			}
			var got []protocol.Finding
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("json output: %v\n%s", err, out.String())
			}
			rules := map[string]bool{}
			for _, f := range got {
				rules[f.Rule] = true
			}
			if len(rules) != len(tt.wantRules) {
				t.Errorf("rules %v, want %v", rules, tt.wantRules)
			}
			for _, r := range tt.wantRules {
				if !rules[r] {
					t.Errorf("missing %s in %v", r, rules)
				}
			}
		})
	}
	var out bytes.Buffer
	if _, err := lintCapture(&out, &out, path, lintFlags{format: "text", noSave: true}, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("ERROR   acp/session-not-ready seq=")) || !bytes.Contains(out.Bytes(), []byte("(ACP session setup)")) {
		t.Errorf("text output:\n%s", out.String())
	}
}

func TestLintCommandUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	for _, args := range [][]string{{"lint"}, {"lint", "--format", "xml", "x"}, {"lint", "--min-severity", "loud", "x"}} {
		out.Reset()
		errOut.Reset()
		if code := run(args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %s)", args, code, errOut.String())
		}
	}
}

// importCapture imports src, skipping while the store is still a stub
// (its placeholder functions panic).
func importCapture(t *testing.T, src, dst string) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			t.Skipf("the capture store is not implemented yet: %v", v)
		}
	}()
	if _, err := capture.Import(src, dst); err != nil {
		t.Fatal(err)
	}
}
