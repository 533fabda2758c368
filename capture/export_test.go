package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// expLine is one line of a test capture.
type expLine struct {
	s    Stream
	text string
}

// expCapture writes lines as stdio chunks into a new capture and returns
// its path.
func expCapture(t testing.TB, lines []expLine) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.acpscope")
	w, err := Create(path, WriterOptions{NoSync: true, NoFeed: true, Meta: Meta{Transport: "stdio", Argv: []string{"agent", "--token=abcdefgh1234"}}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	for i, l := range lines {
		w.Chunk(0, l.s, t0+int64(i)*int64(time.Millisecond), []byte(l.text+"\n"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// expRecords reads every record with its body.
func expRecords(t testing.TB, path string) (Meta, []Record) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []Record
	err = r.Scan(1, func(rec *Record) bool {
		full := *rec
		full.Body, _ = r.Body(rec.Seq)
		out = append(out, full)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.Meta(), out
}

const (
	secretEnv    = "env-secret-9f8e7d"
	secretMeta   = "meta-token-5a4b3c"
	secretAuth   = "auth-pass-1q2w3e"
	secretStderr = "ghp_abcdefghijklmnopqrstuvwx"
)

var twoSessions = []expLine{
	{StreamClient, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"_meta":{"authToken":"` + secretMeta + `"}}}`},
	{StreamAgent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"authMethods":[{"id":"pw","name":"Password"}]}}`},
	{StreamClient, `{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"pw","password":"` + secretAuth + `"}}`},
	{StreamAgent, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	{StreamStderr, `agent: using token ` + secretStderr},
	{StreamClient, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"m","command":"x","args":[],"env":[{"name":"API_KEY","value":"` + secretEnv + `"}]}]}}`},
	{StreamAgent, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`},
	{StreamClient, `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/other","mcpServers":[]}}`},
	{StreamAgent, `{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s2"}}`},
	{StreamClient, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`},
	{StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}`},
	{StreamClient, `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s2","prompt":[{"type":"text","text":"other"}]}}`},
	{StreamAgent, `{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}`},
	{StreamAgent, `{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}`},
}

func TestExportRedactedSession(t *testing.T) {
	src := expCapture(t, twoSessions)
	r, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	if _, err := Export(r, filepath.Join(t.TempDir(), "x"), ExportOptions{}); !errors.Is(err, ErrManySessions) {
		t.Fatalf("export without --session of a two-session capture: %v, want ErrManySessions", err)
	}
	dst := filepath.Join(t.TempDir(), "bug.acpscope")
	res, err := Export(r, dst, ExportOptions{Session: "s1", SourceName: "src.acpscope"})
	if err != nil {
		t.Fatal(err)
	}
	meta, recs := expRecords(t, dst)

	// The file itself must not hold any secret, anywhere.
	raw, _ := os.ReadFile(dst)
	for _, s := range []string{secretEnv, secretMeta, secretAuth, secretStderr, "abcdefgh1234"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("secret %q survived in the export file", s)
		}
	}
	if st, _ := os.Stat(dst); st.Mode().Perm() != 0o600 {
		t.Errorf("export mode %v, want 0600", st.Mode().Perm())
	}
	// Session s2's messages are gone; everything else is byte-identical
	// except the redacted values.
	var want []string
	for _, l := range twoSessions {
		if strings.Contains(l.text, `"s2"`) || strings.Contains(l.text, `"/other"`) || strings.Contains(l.text, `"id":5,"result"`) {
			continue
		}
		want = append(want, l.text)
	}
	if len(recs) != len(want) {
		t.Fatalf("export holds %d records, want %d", len(recs), len(want))
	}
	for i, rec := range recs {
		got := string(rec.Body)
		w := want[i]
		for _, s := range []string{secretEnv, secretMeta, secretAuth, secretStderr} {
			w = strings.ReplaceAll(w, s, Redacted)
		}
		if got != w {
			t.Errorf("record %d:\n got  %s\n want %s", i+1, got, w)
		}
	}
	// Four values in messages and the --token of the command line.
	if len(res.Redactions) != 5 {
		t.Errorf("%d redactions, want 5: %+v", len(res.Redactions), res.Redactions)
	}
	var stored []Redaction
	if err := json.Unmarshal([]byte(meta.Notes["redactions"]), &stored); err != nil || len(stored) != 5 {
		t.Errorf("stored redaction list %q: %v", meta.Notes["redactions"], err)
	}
	if meta.Notes["redacted"] != "yes" || meta.Notes["session"] != "s1" || meta.Notes["exportedFrom"] != "src.acpscope" {
		t.Errorf("export notes %v", meta.Notes)
	}
	if recs[0].Time != time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano() {
		t.Errorf("first record time %d not preserved", recs[0].Time)
	}
}

func TestExportNoRedact(t *testing.T) {
	src := expCapture(t, twoSessions)
	r, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dst := filepath.Join(t.TempDir(), "raw.acpscope")
	res, err := Export(r, dst, ExportOptions{Session: "s2", NoRedact: true})
	if err != nil {
		t.Fatal(err)
	}
	meta, recs := expRecords(t, dst)
	if len(res.Redactions) != 0 || !strings.HasPrefix(meta.Notes["redacted"], "no") {
		t.Errorf("--no-redact redacted %d values, notes %v", len(res.Redactions), meta.Notes)
	}
	found := false
	for _, rec := range recs {
		if bytes.Contains(rec.Body, []byte(secretAuth)) {
			found = true
		}
		if bytes.Contains(rec.Body, []byte(`"s1"`)) {
			t.Errorf("session s1 leaked into the s2 export: %s", rec.Body)
		}
	}
	if !found {
		t.Error("--no-redact lost the authenticate params")
	}
	if recs[len(recs)-1].Kind != wire.KindResponse {
		t.Errorf("last record kind %v", recs[len(recs)-1].Kind)
	}
}

func TestExportJSONLRoundTrip(t *testing.T) {
	src := expCapture(t, twoSessions)
	r, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	res, err := ExportJSONL(r, &buf, ExportOptions{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secretEnv, secretMeta, secretAuth, secretStderr} {
		if bytes.Contains(buf.Bytes(), []byte(s)) {
			t.Errorf("secret %q survived in the JSONL export", s)
		}
	}
	if res.Records != 10 || len(res.Redactions) != 4 {
		t.Errorf("JSONL export wrote %d records, %d redactions", res.Records, len(res.Redactions))
	}
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "s1.jsonl")
	os.WriteFile(jsonl, buf.Bytes(), 0o600)
	dst := filepath.Join(dir, "s1.acpscope")
	if _, err := Import(jsonl, dst); err != nil {
		t.Fatal(err)
	}
	_, back := expRecords(t, dst)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(back) != len(lines) {
		t.Fatalf("%d records came back from %d lines", len(back), len(lines))
	}
	for i, rec := range back {
		want, err := ParseJSONL([]byte(lines[i]))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if string(rec.Body) != string(want.Body) || rec.Time != want.Time || rec.Kind != want.Kind || rec.Dir != want.Dir {
			t.Errorf("line %d came back as %v %v %d %s, want %v %v %d %s", i+1, rec.Dir, rec.Kind, rec.Time, rec.Body, want.Dir, want.Kind, want.Time, want.Body)
		}
	}
}

func TestExportHTTPFrames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "http.acpscope")
	w, err := Create(path, WriterOptions{NoSync: true, NoFeed: true, Meta: Meta{Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	env := &wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST, ConnectionID: "c1",
		Headers: map[string]string{"Authorization": "Bearer tok-abcdefgh", "Cookie": "sid=s3cr3t", "Content-Type": "application/json"}}
	w.Frame(1, wire.DirClient, 1000, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`), 0, env)
	w.Frame(1, wire.DirAgent, 2000, []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`), 0,
		&wire.Envelope{Method: "POST", Path: "/acp", Status: 200, Stream: wire.StreamPOSTReply, Headers: map[string]string{"Set-Cookie": "sid=s3cr3t"}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dst := filepath.Join(t.TempDir(), "out.acpscope")
	res, err := Export(r, dst, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, recs := expRecords(t, dst)
	if len(recs) != 2 || recs[0].HTTP == nil || recs[0].Conn != 1 || recs[0].HTTP.ConnectionID != "c1" {
		t.Fatalf("exported %+v", recs)
	}
	if h := recs[0].HTTP.Headers; h["Authorization"] != Redacted || h["Cookie"] != Redacted || h["Content-Type"] != "application/json" {
		t.Errorf("request headers %v", h)
	}
	if h := recs[1].HTTP.Headers; h["Set-Cookie"] != Redacted {
		t.Errorf("response headers %v", h)
	}
	raw, _ := os.ReadFile(dst)
	if bytes.Contains(raw, []byte("s3cr3t")) || bytes.Contains(raw, []byte("tok-abcdefgh")) {
		t.Error("an HTTP credential survived in the export file")
	}
	if len(res.Redactions) != 3 {
		t.Errorf("%d redactions: %+v", len(res.Redactions), res.Redactions)
	}
}
