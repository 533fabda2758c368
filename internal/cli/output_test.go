package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputFlag: -o is the output file wherever it exists; dump and
// tail still take the old -o FORMAT for a release, saying so on stderr.
func TestOutputFlag(t *testing.T) {
	dir := t.TempDir()
	finishedCapture(t, dir)
	out := filepath.Join(t.TempDir(), "dump.jsonl")
	existing := filepath.Join(t.TempDir(), "existing.txt")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name              string
		args              []string
		code              int
		stdout, stderr    string // each must appear ("" matches anything)
		notStdout, notErr string // neither may appear ("" checks nothing)
	}{
		{"dump -o FILE writes the file", []string{"dump", "--dir", dir, "--format", "jsonl", "-o", out}, 0, "", "", `"seq"`, "deprecated"},
		{"dump --output - is stdout", []string{"dump", "--dir", dir, "--format", "jsonl", "--output", "-"}, 0, `"seq":1,`, "", "", "deprecated"},
		{"dump -o never overwrites", []string{"dump", "--dir", dir, "-o", existing}, 2, "", existing + " already exists: choose another -o", "", ""},
		{"dump -o FORMAT still works", []string{"dump", "--dir", dir, "-o", "jsonl"}, 0, `"seq":1,`, "-o jsonl is deprecated: -o names an output file now", "SEQ\t", ""},
		{"tail -o FORMAT still works", []string{"tail", "--dir", dir, "-n", "1", "-o", "jsonl"}, 0, `"seq":4,`, "write --format jsonl", "", ""},
		{"tail -o FILE says to redirect", []string{"tail", "--dir", dir, "-o", "log.txt"}, 2, "", "redirect it (> log.txt)", "", ""},
		{"--format has no short form", []string{"dump", "--dir", dir, "-f", "jsonl"}, 0, "SEQ", "", `"seq"`, ""}, // -f is --filter: the word jsonl matches nothing
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) ||
				(tt.notStdout != "" && strings.Contains(r.stdout, tt.notStdout)) || (tt.notErr != "" && strings.Contains(r.stderr, tt.notErr)) {
				t.Errorf("acpscope %q: exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout with %q without %q, stderr with %q without %q",
					tt.args, r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.notStdout, tt.stderr, tt.notErr)
			}
		})
	}
	b, err := os.ReadFile(out)
	if err != nil || strings.Count(string(b), "\n") != 4 || !strings.HasPrefix(string(b), `{"seq":1,`) {
		t.Errorf("dump -o %s wrote %q, %v; want the four records as JSONL", out, b, err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("dump -o made %v, %v; want mode 0600: it holds what the capture holds", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("dump -o over an existing file changed it to %q", b)
	}
}
