package inspector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
)

func TestPairingJump(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.resize(100, 60)
	h.typeKeys("jjjj") // #5, the session/prompt request
	h.waitFor("#5 pretty", "paired response #13")
	h.typeKeys("p")
	h.waitFor("#13 pretty", "#5 → response #13, latency 2.2s")
	h.typeKeys("p")
	h.waitFor("#5 pretty", "#13 → request #5")
	h.typeKeys("g")
	h.typeKeys("j") // #2 answers #1
	h.waitFor("#2 pretty")
	h.typeKeys("p")
	h.waitFor("#1 pretty", "#2 → request #1")
	h.typeKeys("jjjjjjj") // #8, a stderr line
	h.waitFor("#8 pretty")
	h.typeKeys("p")
	h.waitFor("#8 has no paired message")
}

func TestDetailFoldsBlobsAndShowsRaw(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.resize(100, 60)
	h.typeKeys("G")
	h.typeKeys("k") // #12 carries an image
	h.waitFor("#12 pretty", "<image/png 1.8 KiB>")
	if strings.Contains(h.text(), "QUJDQUJD") {
		t.Fatal("the base64 blob is shown before it is expanded")
	}
	h.typeKeys("x")
	h.waitFor("QUJDQUJD")
	h.typeKeys("x")
	h.typeKeys("G") // #13, raw view keeps the wire bytes
	h.typeKeys("b")
	h.waitFor("#13 raw", `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`)
}

func TestCopyAndSave(t *testing.T) {
	src := demoSource()
	h := startUI(t, Options{source: src})
	h.waitFor("#1 pretty")
	h.typeKeys("jjjj") // #5
	h.waitFor("#5 pretty")
	h.typeKeys("y")
	h.waitFor("copied #5")
	want, _ := src.Body(5)
	if got := h.sim.GetClipboardData(); string(got) != string(want) {
		t.Fatalf("clipboard holds %q, want the exact bytes %q", got, want)
	}

	path := filepath.Join(t.TempDir(), "msg.json")
	h.typeKeys("w")
	h.waitFor("save to: acpscope-msg-5.json")
	h.key(tcell.KeyCtrlU)
	h.typeKeys(path)
	h.key(tcell.KeyEnter)
	h.waitFor("saved #5 to")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want)+"\n" {
		t.Fatalf("saved %q, want the wire line %q", got, string(want)+"\n")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved with mode %v, want 0600 (messages may hold secrets)", fi.Mode().Perm())
	}
}

func TestDetailShowsFindingsAndEnvelope(t *testing.T) {
	src := demoSource()
	env := &wire.Envelope{Method: "POST", Path: "/acp", Proto: "HTTP/2.0", Status: 202, Stream: wire.StreamPOST,
		ConnectionID: "conn-1", SessionID: "sess_0123456789", Headers: map[string]string{"Authorization": "<redacted>"}}
	src.recs[4].HTTP = env
	h := startUI(t, Options{source: src})
	h.resize(100, 50)
	h.waitFor("#1 pretty", "this is not json") // the row's text is read off the UI goroutine
	// The lint finding marks its row and is explained in the detail pane.
	if row := h.lines()[h.lineWith("this is not json")]; !strings.Contains(row, "✖") {
		t.Fatalf("the row with an error finding is not marked: %q", row)
	}
	h.typeKeys("G")
	h.typeKeys("kk") // #11
	h.waitFor("#11 pretty", "error jsonrpc/not-json: a line on stdout is not JSON-RPC", "this is not json")
	h.typeKeys("g")
	h.typeKeys("jjjj") // #5 travelled over HTTP
	h.waitFor("#5 pretty", "http POST /acp HTTP/2.0 → 202  stream post  Acp-Connection-Id conn-1", "Authorization: <redacted>")
}

func TestZoomDetail(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	if h.lineWith(`"clientCapabilities"`) >= 0 {
		t.Fatal("the small detail pane already shows the whole message")
	}
	h.key(tcell.KeyEnter)
	h.waitFor(`"clientCapabilities": {}`)
	if h.lineWith("initialize") != h.lineWith("#1 → client") {
		t.Fatalf("the table is still shown when zoomed:\n%s", h.text())
	}
	h.key(tcell.KeyEscape)
	h.waitUntil("the table back", func(s string) bool { return strings.Contains(s, "resp   0  initialize") })
}

func TestHugeMessages(t *testing.T) {
	src := demoSource()
	at := src.meta.Start.Add(10 * time.Second)
	blob := strings.Repeat("QUJD", 5<<20) // 20 MiB of base64
	src.add(wire.DirAgent, at, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","mimeType":"image/png","data":"`+blob+`"}}}}`, false)
	src.add(wire.DirAgent, at.Add(time.Millisecond), strings.Repeat("x", 5<<20), false)
	h := startUI(t, Options{source: src})
	h.resize(100, 60)
	h.waitFor("#1 pretty")
	h.typeKeys("G")
	h.waitFor("#15 pretty", "(5.0 MiB line)", "… folded after 64.0 KiB of 5.0 MiB")
	h.typeKeys("k")
	h.waitFor("#14 pretty", "<image/png 15.0 MiB>")
	// The table still answers while such messages are shown.
	h.typeKeys("k")
	h.waitFor("#13 pretty")
}
