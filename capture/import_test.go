package capture

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
)

const devtoolsDir = "../../shared/fixtures/acp-devtools-handshakes"

func TestImportDevtoolsFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(devtoolsDir, "*.json"))
	if len(files) == 0 {
		t.Skipf("no acp-devtools fixtures in %s (they live beside the repository, in ../shared/fixtures)", devtoolsDir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var ex devtoolsExport
			data, _ := os.ReadFile(f)
			if err := json.Unmarshal(data, &ex); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "imported.acpscope")
			res, err := Import(f, dst)
			if err != nil {
				t.Fatal(err)
			}
			if res.Format != FormatDevtools || res.Records != len(ex.Messages) {
				t.Errorf("import result %+v, want %d devtools messages", res, len(ex.Messages))
			}
			meta, recs := expRecords(t, dst)
			if meta.Transport != "import" || meta.Notes["format"] != FormatDevtools {
				t.Errorf("meta %+v", meta)
			}
			if !meta.Start.Equal(time.UnixMilli(ex.Session.StartedAt)) {
				t.Errorf("start %v, want %v", meta.Start, time.UnixMilli(ex.Session.StartedAt))
			}
			wantEnd := time.UnixMilli(ex.Session.EndedAt)
			if ex.Session.EndedAt == 0 {
				wantEnd = time.UnixMilli(ex.Messages[len(ex.Messages)-1].Timestamp)
			}
			if !meta.End.Equal(wantEnd) {
				t.Errorf("end %v, want %v: the session's end, not the time of the import", meta.End, wantEnd)
			}
			if len(recs) != len(ex.Messages) {
				t.Fatalf("%d records, want %d", len(recs), len(ex.Messages))
			}
			for i, m := range ex.Messages {
				rec := recs[i]
				if string(rec.Body) != *m.Raw {
					t.Errorf("record %d body differs from raw:\n got  %s\n want %s", i+1, rec.Body, *m.Raw)
				}
				wantDir := wire.DirClient
				if m.Direction == "agent-to-editor" {
					wantDir = wire.DirAgent
				}
				if rec.Dir != wantDir || rec.Time != m.Timestamp*int64(time.Millisecond) {
					t.Errorf("record %d dir %v time %d, want %v %d", i+1, rec.Dir, rec.Time, wantDir, m.Timestamp*int64(time.Millisecond))
				}
				if !rec.Kind.IsProtocol() {
					t.Errorf("record %d classified %v", i+1, rec.Kind)
				}
			}
		})
	}
}

func TestImportJSONLAndCapture(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "in.jsonl")
	content := `{"dir":"client","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}},"time":"2026-03-04T05:06:07.5Z"}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}},"time":1772600767600}

{"dir":"stderr","msg":"agent ready"}
`
	if err := os.WriteFile(jsonl, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "from-jsonl.acpscope")
	res, err := Import(jsonl, dst)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatJSONL || res.Records != 3 {
		t.Errorf("result %+v", res)
	}
	jmeta, recs := expRecords(t, dst)
	if len(recs) != 3 || string(recs[0].Body) != `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` ||
		recs[1].Dir != wire.DirAgent || recs[2].Kind != wire.KindStderr || string(recs[2].Body) != "agent ready" {
		t.Fatalf("records %+v", recs)
	}
	if want := time.Date(2026, 3, 4, 5, 6, 7, 5e8, time.UTC).UnixNano(); recs[0].Time != want {
		t.Errorf("time %d, want %d", recs[0].Time, want)
	}
	if last := max(recs[0].Time, recs[1].Time, recs[2].Time); !jmeta.Start.Equal(time.Unix(0, recs[0].Time)) || jmeta.End.UnixNano() != last {
		t.Errorf("start %v end %v, want the first and last line's times", jmeta.Start, jmeta.End)
	}
	if at, err := time.Parse(time.RFC3339, jmeta.Notes[NoteImportedAt]); err != nil || time.Since(at) > time.Minute {
		t.Errorf("imported at %q (%v), want now", jmeta.Notes[NoteImportedAt], err)
	}

	// Our own capture: copied record for record.
	again := filepath.Join(dir, "copy.acpscope")
	res, err = Import(dst, again)
	if err != nil {
		t.Fatal(err)
	}
	meta, recs2 := expRecords(t, again)
	if !meta.Start.Equal(jmeta.Start) || !meta.End.Equal(jmeta.End) {
		t.Errorf("copy runs %v to %v, the original %v to %v", meta.Start, meta.End, jmeta.Start, jmeta.End)
	}
	if res.Format != FormatCapture || len(recs2) != 3 || meta.Notes["originalTransport"] != "import" {
		t.Errorf("capture import %+v, %d records, notes %v", res, len(recs2), meta.Notes)
	}
	for i := range recs2 {
		if string(recs2[i].Body) != string(recs[i].Body) || recs2[i].Time != recs[i].Time || recs2[i].Kind != recs[i].Kind {
			t.Errorf("record %d differs after copy: %+v vs %+v", i+1, recs2[i], recs[i])
		}
	}
}

func TestImportUnknownFormat(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]string{
		"text":      "hello world\n",
		"json-obj":  `{"foo":1}`,
		"bad-dir":   `{"dir":"sideways","msg":{}}`,
		"binary":    "\x00\x01\x02garbage",
		"empty.txt": "",
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(dir, name)
			os.WriteFile(src, []byte(content), 0o600)
			dst := filepath.Join(dir, name+".acpscope")
			_, err := Import(src, dst)
			if !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("Import(%q) = %v, want ErrUnknownFormat", content, err)
			}
			if _, statErr := os.Stat(dst); statErr == nil {
				t.Error("a failed import left its output behind")
			}
		})
	}
}

// TestImportCorruptCapture: a damaged capture is reported as one, not as
// a file of some unknown format.
func TestImportCorruptCapture(t *testing.T) {
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true})
	for i := 1; i <= 200; i++ {
		w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "truncated.acpscope")
	if err := os.WriteFile(src, whole[:5000], 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out.acpscope")
	_, err = Import(src, dst)
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Import of a truncated capture = %v, want ErrCorrupt", err)
	}
	if _, statErr := os.Stat(dst); statErr == nil {
		t.Error("a failed import left its output behind")
	}
}
