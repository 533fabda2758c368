package leakcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
)

// Format is one export format: Export writes opts.Session of src to w,
// redacted unless opts.NoRedact, as a user would attach it to an issue.
type Format struct {
	Name   string
	Export func(src capture.Source, w io.Writer, opts capture.ExportOptions) error
}

// Secret is one planted credential.
type Secret struct {
	Kind  string // what it is: "github token"
	Place string // where it was planted: "tool call rawInput"
	Value string // as planted (before any JSON escaping)
	core  string // its random part, found even if the rest was redacted
}

// Leak is a secret found in an export.
type Leak struct {
	Secret Secret
	Where  string // "line 12, column 40" of the export
	Found  string // which form of the secret was found
}

func (l Leak) String() string {
	return fmt.Sprintf("%s planted in %s leaked at %s (as %q)", l.Secret.Kind, l.Secret.Place, l.Where, l.Found)
}

// fingerprint matches a credential fingerprint, keyed or not, raw or as
// JSON escapes it.
var fingerprint = regexp.MustCompile(`(?:sha256|hmac):[0-9a-fA-F]{6,}`)

// Run exports the corpus in format f and fails t for every leak, naming
// the secret, where it was planted and where it leaked.
func Run(t *testing.T, f Format) {
	t.Helper()
	c := Build(t, t.TempDir())
	src, err := capture.Open(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out bytes.Buffer
	if err := f.Export(src, &out, capture.ExportOptions{Session: c.Session, SourceName: "corpus.acpscope"}); err != nil {
		t.Fatalf("%s export of the corpus: %v", f.Name, err)
	}
	if out.Len() == 0 {
		t.Fatalf("%s export of the corpus is empty", f.Name)
	}
	for _, l := range c.Leaks(out.Bytes()) {
		t.Errorf("%s export: %v", f.Name, l)
	}
}

// Leaks returns every planted secret and fingerprint found in out.
func (c *Corpus) Leaks(out []byte) []Leak {
	var leaks []Leak
	for _, s := range c.Secrets {
		for _, n := range needles(s) {
			if k := bytes.Index(out, []byte(n)); k >= 0 {
				leaks = append(leaks, Leak{Secret: s, Where: position(out, k), Found: n})
				break
			}
		}
	}
	for _, m := range fingerprint.FindAllIndex(out, -1) {
		leaks = append(leaks, Leak{Secret: Secret{Kind: "credential fingerprint", Place: "an HTTP header"},
			Where: position(out, m[0]), Found: string(out[m[0]:m[1]])})
	}
	return leaks
}

// needles are the forms in which a secret would show: as planted, as
// JSON writes it, its random core, and each line of a multi-line one.
func needles(s Secret) []string {
	quoted, _ := json.Marshal(s.Value)
	list := []string{s.Value, string(quoted[1 : len(quoted)-1]), s.core}
	for _, line := range strings.Split(s.Value, "\n") {
		if len(line) >= 12 && !strings.HasPrefix(line, "-----") {
			list = append(list, line)
		}
	}
	return list
}

// position says where out[k] is: line and column, and the text around.
func position(out []byte, k int) string {
	line := bytes.Count(out[:k], []byte("\n")) + 1
	col := k - bytes.LastIndexByte(out[:k], '\n')
	from := max(0, k-40)
	return fmt.Sprintf("line %d, column %d, after %q", line, col, out[from:k])
}

// CaptureFile makes a Format's Export of an exporter that writes a
// capture file (capture.Export): it exports to a temporary file, then
// writes what a reader of that file can see (its metadata, every record
// as JSONL, the list of redactions) followed by the file's raw bytes.
func CaptureFile(export func(src capture.Source, dst string, opts capture.ExportOptions) (capture.ExportResult, error)) func(capture.Source, io.Writer, capture.ExportOptions) error {
	return func(src capture.Source, w io.Writer, opts capture.ExportOptions) error {
		dir, err := os.MkdirTemp("", "leakcheck")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dst := filepath.Join(dir, "bug.acpscope")
		if _, err := export(src, dst, opts); err != nil {
			return err
		}
		if err := dumpCapture(dst, w); err != nil {
			return err
		}
		raw, err := os.ReadFile(dst)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "--- raw file ---\n%s", raw)
		return err
	}
}

// dumpCapture writes a capture's metadata, findings and records.
func dumpCapture(path string, w io.Writer) error {
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	meta, _ := json.Marshal(r.Meta())
	fmt.Fprintf(w, "meta %s\n", meta)
	var scanErr error
	err = r.Scan(1, func(rec *capture.Record) bool {
		full := *rec
		if full.Body, scanErr = r.Body(rec.Seq); scanErr != nil {
			return false
		}
		_, scanErr = w.Write(append(capture.AppendJSONL(nil, &full), '\n'))
		return scanErr == nil
	})
	if err == nil {
		err = scanErr
	}
	return err
}

// WithRedactions makes a Format's Export that also writes the list of
// what was redacted, which the command prints: the list must not name a
// value either.
func WithRedactions(export func(src capture.Source, w io.Writer, opts capture.ExportOptions) (capture.ExportResult, error)) func(capture.Source, io.Writer, capture.ExportOptions) error {
	return func(src capture.Source, w io.Writer, opts capture.ExportOptions) error {
		res, err := export(src, w, opts)
		if err != nil {
			return err
		}
		list, _ := json.Marshal(res.Redactions)
		_, err = fmt.Fprintf(w, "--- redactions ---\n%s\n", list)
		return err
	}
}
