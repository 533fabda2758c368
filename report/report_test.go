package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixedNow makes reports reproducible.
func fixedNow() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }

func render(t testing.TB, src capture.Source, o Options) []byte {
	t.Helper()
	o.Now = fixedNow
	var out bytes.Buffer
	if _, err := Write(src, &out, o); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// skeleton is the page without its stylesheet, script, data and the
// inside of its diagram (TestSections checks that): the structure the
// golden file keeps.
func skeleton(page []byte) []byte {
	page = regexp.MustCompile(`(?s)(<svg class="seq"[^>]*>).*?(</svg>)`).ReplaceAll(page, []byte("$1…$2"))
	page = regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAll(page, []byte("<style>…</style>"))
	page = regexp.MustCompile(`(?s)<script>.*?</script>`).ReplaceAll(page, []byte("<script>…</script>"))
	return regexp.MustCompile(`(?s)(<script id="acpscope-data" type="application/json">).*?(</script>)`).ReplaceAll(page, []byte("$1…$2"))
}

// TestSkeleton: the page's structure for a whole session, as a golden
// file (go test ./report -run Skeleton -update rewrites it).
func TestSkeleton(t *testing.T) {
	page := render(t, open(t, fixture(t, 0, 0)), Options{})
	testkit.Golden(t, filepath.Join("testdata", "skeleton.html"), skeleton(page), *update, "-update")
}

// TestSelfContained: the page loads nothing: no URL but the page's own
// anchors and the SVG namespace, and a policy that forbids fetching.
func TestSelfContained(t *testing.T) {
	page := render(t, open(t, fixture(t, 0, 0)), Options{})
	if !bytes.Contains(page, []byte(`content="default-src 'none'`)) {
		t.Error("the page has no content security policy forbidding fetches")
	}
	for _, m := range regexp.MustCompile(`(?i)(?:src|href)\s*=\s*"([^"#][^"]*)"|url\(\s*['"]?([^#'")][^'")]*)|@import|https?://[^\s"'<]+`).FindAll(page, -1) {
		if string(m) != "http://www.w3.org/2000/svg" {
			t.Errorf("the page refers to %s", m)
		}
	}
}

// TestRedacted: the report holds no secret: not in the header, the
// conversation, the table's data, nor the diagram.
func TestRedacted(t *testing.T) {
	src := open(t, fixture(t, 0, 0))
	page := render(t, src, Options{})
	if bytes.Contains(page, []byte("FAKEFAKEFAKE")) {
		t.Error("the report holds the planted API key")
	}
	if !bytes.Contains(page, []byte(capture.Redacted)) && !bytes.Contains(page, []byte(`\u003credacted\u003e`)) {
		t.Error("the report says nothing was redacted")
	}
	var out bytes.Buffer
	res, err := Write(src, &out, Options{Export: capture.ExportOptions{NoRedact: true}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("FAKEFAKEFAKE")) || len(res.Redactions) != 0 {
		t.Error("--no-redact should keep the key, and redact nothing")
	}
	if !bytes.Contains(out.Bytes(), []byte("not redacted")) {
		t.Error("an unredacted report does not say so")
	}
}

// TestSections: each part of the report is there, with what it must say.
func TestSections(t *testing.T) {
	page := string(render(t, open(t, fixture(t, 0, 0)), Options{}))
	for _, want := range []string{
		`zed 0.201.3 (Zed)`, `claude-code-acp 0.5.1`, `<dt>protocol</dt><dd>v1</dd>`,
		`fs.readTextFile`, `promptCapabilities.image`, `oauth (Log in)`,
		`title="read only">Plan mode</span>`, `<td>Model</td><td><b>sonnet</b></td>`,
		`Turn 1 · end_turn`, `Fix the greeting in main.go`, `I will read main.go first.`, `The user wants a new greeting.`,
		`<span class="del">-	println(&#34;hi&#34;)</span>`, `<span class="add">&#43;	println(&#34;hello, ACP&#34;)</span>`, `<span class="hunk">@@ -1,5 &#43;1,5 @@</span>`,
		`Read main.go`, `pending → completed`, `→ <b>selected: Allow</b>`, `terminal not supported`,
		`<a class="arrow req" href="#m1">`, `<a class="arrow err" href="#m`, `session/prompt result end_turn [2]`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestFolding: a body over the fold limit is in the data by its size and
// its beginning, not whole; smaller ones are whole.
func TestFolding(t *testing.T) {
	page := render(t, open(t, fixture(t, 0, 300<<10)), Options{FoldBytes: 64 << 10, FoldHead: 1 << 10, Export: capture.ExportOptions{NoRedact: true}})
	doc := data(t, page)
	folded := 0
	for _, r := range doc.Rows {
		switch {
		case r.Folded:
			folded++
			if r.Size < 300<<10 || len(r.Body) > 1<<10 {
				t.Errorf("#%d folded to %d bytes of %d", r.Seq, len(r.Body), r.Size)
			}
		case int64(len(r.Body)) != r.Size:
			t.Errorf("#%d holds %d bytes of %d, unfolded", r.Seq, len(r.Body), r.Size)
		}
	}
	if folded != 1 {
		t.Errorf("%d folded bodies, want the one large message", folded)
	}
	if len(page) > 200<<10 {
		t.Errorf("the page is %d bytes: the large message was embedded", len(page))
	}
}

// TestFindingsLinked: findings stored with a capture appear with links
// to their messages, and mark those rows; a capture never linted is
// linted for the report.
func TestFindingsLinked(t *testing.T) {
	path := fixture(t, 0, 0)
	r := open(t, path)
	page := string(render(t, r, Options{}))
	r.Close() // SaveFindings needs the file to itself
	if !strings.Contains(page, "found by lint when this report was made") {
		t.Error("an unlinted capture's report does not say where its findings come from")
	}
	stored := []protocol.Finding{{Rule: "acp/test-rule", Severity: protocol.Error, Message: "the third message is wrong", Seqs: []uint64{3}}}
	if err := capture.SaveFindings(path, stored); err != nil {
		t.Fatal(err)
	}
	page2 := render(t, open(t, path), Options{})
	for _, want := range []string{"as stored by acpscope lint", "acp/test-rule", `<a class="seq" href="#m3">#3</a>`} {
		if !strings.Contains(string(page2), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	doc := data(t, page2)
	if len(doc.Findings) != 1 || doc.Findings[0].Seqs[0] != 3 {
		t.Errorf("the table's findings: %+v", doc.Findings)
	}
}

// data decodes the page's JSON document.
func data(t testing.TB, page []byte) tableDoc {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script id="acpscope-data" type="application/json">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no data in the page")
	}
	var doc tableDoc
	if err := json.Unmarshal(m[1], &doc); err != nil {
		t.Fatalf("the page's data: %v", err)
	}
	return doc
}

// TestAlteredMarked checks that a message acpscope altered carries its
// fault into the page's table (the row's ⚑ and its detail), and that
// lint's finding on the capture's alterations is listed.
func TestAlteredMarked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faulted.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true, Meta: capture.Meta{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Chunk(0, capture.StreamClient, 1, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`+"\n"))
	w.Altered(0, wire.DirAgent, 2, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`), nil,
		&protocol.Fault{ID: 1, Action: protocol.ActionDelay, Stage: protocol.StageForwarded, Rule: "slow-agent", By: protocol.ByPlan, Arrived: 1, Note: "delay 500ms"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	page := render(t, open(t, path), Options{})
	doc := data(t, page)
	if len(doc.Rows) != 2 || doc.Rows[0].Fault != "" {
		t.Fatalf("rows %+v", doc.Rows)
	}
	if want := "forwarded (delay by rule slow-agent, #1): delay 500ms"; doc.Rows[1].Fault != want {
		t.Errorf("the altered row says %q, want %q", doc.Rows[1].Fault, want)
	}
	found := false
	for _, f := range doc.Findings {
		found = found || f.Rule == "acpscope/altered"
	}
	if !found {
		t.Errorf("no acpscope/altered finding in %+v", doc.Findings)
	}
}

// TestRecordingFacts: the header says what capture lost, and when it
// fell behind the wire and caught up, and says neither when neither
// happened.
func TestRecordingFacts(t *testing.T) {
	tests := []struct {
		name string
		meta capture.Meta
		want map[string]string // label → value; "" means absent
	}{
		{"kept pace", capture.Meta{}, map[string]string{"lost while recording": "", "capture behind the wire": ""}},
		{"lost some", capture.Meta{Loss: capture.Loss{Messages: 3, Bytes: 600}},
			map[string]string{"lost while recording": "3 messages, 600 bytes, 0 failed writes", "capture behind the wire": ""}},
		{"behind, caught up", capture.Meta{Backlog: capture.Backlog{Bytes: 300 << 20, Peak: 90 << 20}},
			map[string]string{"lost while recording": "", "capture behind the wire": "up to 90.0 MiB waited on disk (300.0 MiB in all), recorded in the end"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, f := range captureFacts(tt.meta, "", 1) {
				got[f.Label] = f.Value
			}
			for label, want := range tt.want {
				if got[label] != want {
					t.Errorf("%s = %q, want %q", label, got[label], want)
				}
			}
		})
	}
}
