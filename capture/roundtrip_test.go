package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpscope/acpscope/wire"
)

// mixedCapture writes a capture holding every kind of record an export
// and an import must carry exactly: stdio lines of both sides, CRLF,
// invalid JSON, invalid UTF-8, stderr, a batch, HTTP and WebSocket frames
// with their envelopes, a large message after small ones, and a final
// partial line. big is the large message's size.
func mixedCapture(t testing.TB, big int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mixed.acpscope")
	w, err := Create(path, WriterOptions{NoSync: true, NoFeed: true, Meta: Meta{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	at := func(i int) int64 { return t0 + int64(i)*int64(time.Millisecond) }
	lines := []struct {
		s    Stream
		text string
	}{
		{StreamClient, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`},
		{StreamAgent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` + "\r"},
		{StreamStderr, "agent: starting"},
		{StreamClient, `[{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}},{"jsonrpc":"2.0","method":"x/note"}]`},
		{StreamAgent, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`},
		{StreamAgent, `not json at all`},
		{StreamAgent, "\xff\xfe binary"},
		{StreamClient, ``},
	}
	for i, l := range lines {
		w.Chunk(0, l.s, at(i), []byte(l.text+"\n"))
	}
	for i := 0; i < 300; i++ {
		w.Chunk(0, StreamAgent, at(10+i), fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d"}}}}`+"\n", i))
	}
	text := bytes.Repeat([]byte("0123456789abcdef"), big/16)
	msg := append([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`), text...)
	msg = append(msg, `"}}}}`+"\n"...)
	for off := 0; off < len(msg); off += 64 << 10 {
		for w.Stats().Queued > 16<<20 {
			time.Sleep(time.Millisecond)
		}
		w.Chunk(0, StreamAgent, at(400), msg[off:min(off+64<<10, len(msg))])
	}
	envs := []struct {
		dir  wire.Dir
		body string
		env  wire.Envelope
	}{
		{wire.DirClient, `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
			wire.Envelope{Method: "POST", Path: "/acp", Proto: "HTTP/2.0", Stream: wire.StreamPOST, ConnectionID: "c1", Headers: map[string]string{"content-type": "application/json"}}},
		{wire.DirAgent, ``, wire.Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: wire.StreamHTTPControl, ConnectionID: "c1"}},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}`,
			wire.Envelope{Method: "GET", Path: "/acp", Status: 200, Stream: wire.StreamSession, ConnectionID: "c1", SessionID: "s1", EventID: "3"}},
		{wire.DirClient, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`,
			wire.Envelope{Method: "GET", Path: "/acp", Status: 101, Stream: wire.StreamWebSocket}},
	}
	for i, e := range envs {
		env := e.env
		w.Frame(1, e.dir, at(500+i), []byte(e.body), 0, &env)
	}
	w.Chunk(0, StreamAgent, at(600), []byte(`{"jsonrpc":"2.0","method":"cut`))
	w.EndStream(0, StreamAgent, at(601))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// dumpJSONL is what acpscope dump --format jsonl writes for a capture.
func dumpJSONL(t testing.TB, path string) []byte {
	t.Helper()
	r := openTest(t, path)
	var out []byte
	err := r.Scan(1, func(rec *Record) bool {
		body, err := r.Body(rec.Seq)
		if err != nil {
			t.Fatal(err)
		}
		rec.Body = body
		out = append(AppendJSONL(out, rec), '\n')
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTripIsExact: dump → import → dump, export → dump and
// export --format jsonl → import → dump give back the source's dump byte
// for byte, records and bodies, seqs, times, pairing and envelopes.
func TestRoundTripIsExact(t *testing.T) {
	src := mixedCapture(t, 17<<20) // past bigMessage, after small records
	want := dumpJSONL(t, src)
	if n := bytes.Count(want, []byte("\n")); n < 300 {
		t.Fatalf("the source holds %d records", n)
	}
	dir := t.TempDir()
	r := openTest(t, src)

	dumped := filepath.Join(dir, "dump.jsonl")
	if err := os.WriteFile(dumped, want, 0o600); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "imported.acpscope")
	if _, err := Import(dumped, imported); err != nil {
		t.Fatal(err)
	}
	sameDump(t, "dump → import → dump", dumpJSONL(t, imported), want)

	exported := filepath.Join(dir, "exported.acpscope")
	if _, err := Export(r, exported, ExportOptions{NoRedact: true}); err != nil {
		t.Fatal(err)
	}
	sameDump(t, "export → dump", dumpJSONL(t, exported), want)

	var jsonl bytes.Buffer
	if _, err := ExportJSONL(r, &jsonl, ExportOptions{NoRedact: true}); err != nil {
		t.Fatal(err)
	}
	exportedJSONL := filepath.Join(dir, "exported.jsonl")
	os.WriteFile(exportedJSONL, jsonl.Bytes(), 0o600)
	fromJSONL := filepath.Join(dir, "from-jsonl.acpscope")
	if _, err := Import(exportedJSONL, fromJSONL); err != nil {
		t.Fatal(err)
	}
	sameDump(t, "export --format jsonl → import → dump", dumpJSONL(t, fromJSONL), want)
}

// sameDump compares two dumps line by line, naming the first difference.
func sameDump(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) && i < len(w); i++ {
		if !bytes.Equal(g[i], w[i]) {
			t.Fatalf("%s: line %d differs:\n got  %.300s\n want %.300s", what, i+1, g[i], w[i])
		}
	}
	t.Fatalf("%s: %d lines, want %d", what, len(g), len(w))
}

// TestImportWaitsForTheWriter: an import whose lines arrive faster than
// the Writer commits them waits instead of losing them, on the queue's
// item bound as on its byte bound (300,000 one-line records used to fail
// with "could not be written").
func TestImportWaitsForTheWriter(t *testing.T) {
	defer func(n int) { copyQueueChunks = n }(copyQueueChunks)
	copyQueueChunks = 8
	dir := t.TempDir()
	src := filepath.Join(dir, "many.jsonl")
	var b bytes.Buffer
	const n = 20000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","n":%d}},"time":%d}`+"\n", i, 1700000000000+i)
	}
	os.WriteFile(src, b.Bytes(), 0o600)
	dst := filepath.Join(dir, "many.acpscope")
	res, err := Import(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	r := openTest(t, dst)
	if res.Records != n || r.Last() != n || r.Meta().Loss.Messages != 0 {
		t.Errorf("imported %d records, the capture holds %d, lost %+v; want %d and none lost", res.Records, r.Last(), r.Meta().Loss, n)
	}
	if want := time.UnixMilli(1700000000000 + n - 1); !r.Meta().End.Equal(want) {
		t.Errorf("end %v, want the last line's time %v", r.Meta().End, want)
	}
}

// TestLineReader: lines of any length come back whole, longer ones in
// memory of their own, with their numbers; empty lines are skipped.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", lineBuffer*2+7)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"short", "a\nb\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"blank lines and CRLF", "\n  \r\na\r\n\nb\r\n", []string{"a", "b"}},
		{"long lines", "a\n" + long + "\nb\n" + long, []string{"a", long, "b", long}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in")
			os.WriteFile(path, []byte(tt.in), 0o600)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lr := newLineReader(f)
			var got []string
			for {
				l, err := lr.nonEmpty()
				if len(l.text) > 0 {
					got = append(got, string(l.text))
					if l.owned != (len(l.text) > lineBuffer) {
						t.Errorf("line %d of %d bytes: owned %v", l.n, len(l.text), l.owned)
					}
				}
				if err != nil {
					break
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d lines, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("line %d: %.40q…, want %.40q…", i+1, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestUnquote decodes JSON strings as encoding/json does.
func TestUnquote(t *testing.T) {
	for _, lit := range []string{
		`""`, `"plain"`, `"a\"b\\c\/d"`, `"\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`,
		`"lone \ud800 high"`, `"lone \udc00 low"`, `"\ud800\u0041"`, `"é ünïcödé"`,
	} {
		checkUnquote(t, []byte(lit))
	}
}

func checkUnquote(t *testing.T, lit []byte) {
	t.Helper()
	var want string
	if json.Unmarshal(lit, &want) != nil {
		return
	}
	got, err := unquote(lit)
	if err != nil || string(got) != want {
		t.Errorf("unquote(%s) = %q, %v; want %q", lit, got, err, want)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\ud83d\ude00"`, `"\u0000"`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		lit = bytes.TrimSpace(lit) // Unmarshal hands over the value alone
		if !json.Valid(lit) || len(lit) == 0 || lit[0] != '"' || !utf8.Valid(lit) {
			return
		}
		checkUnquote(t, lit)
	})
}

// TestExportStopsOnError: an error from the last stage ends the export's
// other stages and comes back; no goroutine is left behind.
func TestExportStopsOnError(t *testing.T) {
	r := openTest(t, mixedCapture(t, 1<<20))
	before := runtime.NumGoroutine()
	ex, err := NewExporter(r, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("disk full")
	n := 0
	err = ex.Each(false, func(*Record) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 {
		t.Errorf("Each = %v after %d records, want the fn's error after 5", err, n)
	}
	deadline := time.Now().Add(waitLimit)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines after the export, %d before", g, before)
	}
}
