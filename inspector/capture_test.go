package inspector

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
)

// wireLine is one line a peer wrote.
type wireLine struct {
	stream capture.Stream
	line   string
}

// writeCapture records lines into a real capture file through the
// Writer, as the proxy would, and returns its path.
func writeCapture(tb testing.TB, dir, name string, lines []wireLine) string {
	return writeCaptureAt(tb, dir, name, "test-agent", time.Unix(1_780_000_000, 0), lines)
}

func writeCaptureAt(tb testing.TB, dir, name, agent string, start time.Time, lines []wireLine) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	w, err := capture.Create(path, capture.WriterOptions{
		NoSync: true, NoFeed: true,
		Meta: capture.Meta{Agent: agent, Transport: "stdio", Start: start},
	})
	if err != nil {
		tb.Fatalf("creating capture: %v", err)
	}
	t := start.UnixNano()
	for _, l := range lines {
		t += int64(10 * time.Millisecond)
		w.Chunk(0, l.stream, t, []byte(l.line+"\n"))
	}
	if err := w.Close(); err != nil {
		tb.Fatalf("closing capture: %v", err)
	}
	return path
}

// demoLines is a short conversation, the shape the demo peers produce.
func demoLines() []wireLine {
	c, a, e := capture.StreamClient, capture.StreamAgent, capture.StreamStderr
	sid := "sess_42"
	return []wireLine{
		{c, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`},
		{a, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`},
		{c, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`},
		{a, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"` + sid + `"}}`},
		{c, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"Fix the bug"}]}}`},
		{a, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"session_info_update","title":"Bug hunt"}}}`},
		{a, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit main.go","kind":"edit","status":"pending"}}}`},
		{e, `agent: editing main.go`},
		{a, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"diff","path":"main.go","oldText":"x := 1","newText":"x := 2"}]}}}`},
		{a, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Fixed it."}}}}`},
		{a, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`},
	}
}

func TestRealCapture(t *testing.T) {
	path := writeCapture(t, t.TempDir(), "demo"+capture.Ext, demoLines())
	h := startUI(t, Options{Path: path})
	h.resize(100, 50)
	h.waitFor("demo.acpscope", "test-agent", "11 msgs", "update:tool_call_update", "agent: editing main.go")
	h.typeKeys("jjjj")
	h.waitFor("#5 pretty", "pair #11")
	h.typeKeys("p")
	h.waitFor("#11 pretty", "#5 → response #11")
	h.typeKeys("c")
	h.waitFor("session sess_42 — Bug hunt", "user: Fix the bug", "Edit main.go (edit) [pending→completed]",
		"diff main.go", "@@ -1 +1 @@", "-x := 1", "+x := 2", "agent: Fixed it.", "stop: end_turn")
	h.key(tcell.KeyEscape)
	h.typeKeys("f")
	h.typeKeys("update:tool_call*")
	h.key(tcell.KeyEnter)
	h.waitFor("  2 shown")
}

// TestClosedSourceIsReported: a store that goes away under the view
// gives a message, not a crash.
func TestClosedSourceIsReported(t *testing.T) {
	src := demoSource()
	h := startUI(t, Options{source: src})
	h.waitFor("#1 pretty")
	src.Close()
	h.typeKeys("G")
	h.waitFor("body unreadable: capture closed")
}

// TestHTTPExchangeRows: a status-only HTTP exchange recorded by the HTTP
// proxy (a 202 to a POST) reads as what it was, not as an empty line the
// agent sent.
func TestHTTPExchangeRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "http"+capture.Ext)
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true, Meta: capture.Meta{Agent: "http-agent", Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	post := &wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST}
	accepted := &wire.Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: wire.StreamHTTPControl}
	w.Frame(0, wire.DirClient, 1, []byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`), 0, post)
	w.Frame(0, wire.DirAgent, 2, nil, 0, accepted)
	w.Frame(0, wire.DirAgent, 3, []byte("upstream down"), 0, &wire.Envelope{Method: "POST", Path: "/acp", Status: 502, Stream: wire.StreamHTTPControl})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h := startUI(t, Options{Path: path})
	h.resize(100, 30)
	h.waitFor("session/cancel", "POST /acp 202 Accepted", "POST /acp 502 Bad Gateway")
	if line := h.lines()[h.lineWith("POST /acp 202 Accepted")]; !strings.Contains(line, "http") || strings.Contains(line, "nonrpc") {
		t.Errorf("exchange row reads %q, want kind http", line)
	}
	y := h.lineWith("POST /acp 502 Bad Gateway")
	line := h.lines()[y]
	x := utf8.RuneCountInString(line[:strings.Index(line, "POST /acp 502")])
	if fg, _, _ := h.style(x, y).Decompose(); fg != colorError {
		t.Errorf("a 502 row is drawn in %v, want the error colour", fg)
	}
}
