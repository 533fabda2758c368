package protocol

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSchemaValidator(t *testing.T) {
	v, err := NewSchemaValidator(filepath.Join("testdata", "schema", "acp-mini.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := v.Definitions(); n != 5 {
		t.Errorf("%d definitions, want 5", n)
	}
	msgs, opts := loadJSONL(t, filepath.Join("testdata", "schema", "valid.jsonl"))
	opts.Schema = v
	if got := withRule(Lint(msgs, opts), "schema/invalid"); len(got) != 0 {
		t.Errorf("valid capture: %s", dump(got))
	}
	msgs, opts = loadJSONL(t, filepath.Join("testdata", "schema", "invalid.jsonl"))
	opts.Schema = v
	got := withRule(Lint(msgs, opts), "schema/invalid")
	want := []struct {
		seq  uint64
		path string
	}{{1, "/protocolVersion"}, {3, "/prompt/1/type"}, {4, "/update"}, {5, "/stopReason"}}
	if len(got) != len(want) {
		t.Fatalf("got %d findings, want %d:\n%s", len(got), len(want), dump(got))
	}
	for i, w := range want {
		if got[i].Seqs[0] != w.seq || !strings.Contains(got[i].Message, w.path) {
			t.Errorf("finding %d = seq %v %q, want seq %d mentioning %s", i, got[i].Seqs, got[i].Message, w.seq, w.path)
		}
	}
}

func TestSchemaValidatorErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewSchemaValidator(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"$defs":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSchemaValidator(bad); !errors.Is(err, ErrSchema) {
		t.Errorf("schema without annotations: %v, want ErrSchema", err)
	}
}
