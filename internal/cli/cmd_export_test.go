package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// TestExportHTML: --format html writes one page that needs nothing else,
// to a new file or to stdout, and says what it wrote.
func TestExportHTML(t *testing.T) {
	dir := demoCapture(t)
	out := filepath.Join(t.TempDir(), "report.html")
	r := runCLI(t, nil, "export", "--dir", dir, "latest", "--format", "html", "-o", out)
	if r.code != 0 {
		t.Fatalf("export --format html: exit %d: %s", r.code, r.stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!doctype html>", "acpscope report", `id="acpscope-data"`, "Change the greeting in main.go"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(string(page), "<script src") || strings.Contains(string(page), "<link") {
		t.Error("the report loads something from elsewhere")
	}
	if !strings.Contains(r.stderr, "wrote 81 records") || !strings.Contains(r.stderr, "redacted 0 values") {
		t.Errorf("export said:\n%s", r.stderr)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("the report is %v, want 0600 like every export", fi.Mode().Perm())
	}
	again := runCLI(t, nil, "export", "--dir", dir, "latest", "--format", "html", "-o", out)
	if again.code != 2 || !strings.Contains(again.stderr, "already exists") {
		t.Errorf("a second export over the report: exit %d: %s", again.code, again.stderr)
	}
	stdout := runCLI(t, nil, "export", "--dir", dir, "latest", "--format", "html")
	if stdout.code != 0 || !strings.HasPrefix(stdout.stdout, "<!doctype html>") {
		t.Errorf("export --format html to stdout: exit %d, %.40q…", stdout.code, stdout.stdout)
	}
}

// TestExportHAR: --format har writes HAR for an HTTP capture and refuses
// a stdio one with exit 2, saying which formats it can have instead.
func TestExportHAR(t *testing.T) {
	stdio := runCLI(t, nil, "export", "--dir", demoCapture(t), "latest", "--format", "har")
	if stdio.code != 2 || !strings.Contains(stdio.stderr, "HAR needs a capture recorded over HTTP") || !strings.Contains(stdio.stderr, "--format html") || stdio.stdout != "" {
		t.Errorf("HAR of a stdio capture: exit %d, stdout %q, stderr:\n%s", stdio.code, stdio.stdout, stdio.stderr)
	}

	path := filepath.Join(t.TempDir(), "http.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true, Meta: capture.Meta{Transport: "http", Listen: "127.0.0.1:8700"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Frame(1, wire.DirClient, 1e9, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), 0,
		&wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST, Headers: map[string]string{"authorization": "Bearer sk-ant-api03-FAKEFAKEFAKEFAKEFAKE"}})
	w.Frame(1, wire.DirAgent, 2e9, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`), 0,
		&wire.Envelope{Method: "POST", Path: "/acp", Status: 200, Stream: wire.StreamPOSTReply, ConnectionID: "c1"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, "export", path, "--format", "har")
	if r.code != 0 {
		t.Fatalf("export --format har: exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Log struct {
			Version string `json:"version"`
			Entries []struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
				Response struct {
					Status int `json:"status"`
				} `json:"response"`
				Time float64 `json:"time"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("the HAR is not JSON: %v", err)
	}
	if doc.Log.Version != "1.2" || len(doc.Log.Entries) != 1 || doc.Log.Entries[0].Request.URL != "http://127.0.0.1:8700/acp" ||
		doc.Log.Entries[0].Response.Status != 200 || doc.Log.Entries[0].Time != 1000 {
		t.Errorf("the HAR: %+v", doc.Log)
	}
	if strings.Contains(r.stdout, "FAKEFAKE") || !strings.Contains(r.stderr, "redacted 1 value") {
		t.Errorf("the Authorization header was not redacted (stderr: %s)", r.stderr)
	}
}

// TestImportManyLines: a JSONL of 300,000 one-line records imports
// whole (it used to fail with "could not be written; try again").
func TestImportManyLines(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "many.jsonl")
	largest, count := genJSONL(t, in, sizes{"300k records", 300_000, 0})
	out := filepath.Join(dir, "many.acpscope")
	cmd := exec.Command(plainBinary(t), "import", in, "-o", out) // no race detector: it would take minutes
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("import: %v: %s", err, stderr.String())
	}
	r := result{stderr: stderr.String()}
	src, err := capture.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Last() != uint64(count) || src.Meta().Loss.Messages != 0 || !strings.Contains(r.stderr, "300000 records") {
		t.Errorf("imported %d of %d records (largest %d bytes), lost %+v; import said %s", src.Last(), count, largest, src.Meta().Loss, r.stderr)
	}
}
