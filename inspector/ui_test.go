package inspector

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
)

func TestNavigation(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("initialize", "#1 pretty", "demo-agent", "13 msgs")
	h.typeKeys("jj")
	h.waitFor("#3 pretty", `#3 → client  request  id 1  session/new`)
	h.typeKeys("G")
	h.waitFor("#13 pretty", "#13 ← agent  response  id 2  session/prompt")
	h.typeKeys("k")
	h.waitFor("#12 pretty")
	h.typeKeys("g")
	h.waitFor("#1 pretty")
	h.key(tcell.KeyDown)
	h.waitFor("#2 pretty")
	h.key(tcell.KeyEnd)
	h.waitFor("#13 pretty")
	h.key(tcell.KeyHome)
	h.waitFor("#1 pretty")

	// The table shows the session/update variant, stderr and errors.
	h.waitFor("update:agent_message_chunk", "agent log: opening README", "fs/read_text_file [-32002]")
	// Δ time mode.
	h.typeKeys("t")
	h.waitFor("+25.0ms", "Δt")
	h.typeKeys("t")
	h.waitUntil("absolute times", func(s string) bool {
		row := h.lines()[h.lineWith("resp   0  initialize")]
		return !strings.Contains(s, "Δt") && !strings.Contains(row, "+")
	})
}

func TestPaging(t *testing.T) {
	h := startUI(t, Options{source: bigSource(5000)})
	h.waitFor("#1 pretty", "5000 msgs")
	h.key(tcell.KeyPgDn)
	h.waitUntil("a page down", func(s string) bool { return !strings.Contains(s, "#1 pretty") && strings.Contains(s, " pretty") })
	h.typeKeys("G")
	h.waitFor("#5000 pretty", "#5000 → client  notification  note/2")
	h.key(tcell.KeyPgUp)
	h.waitUntil("a page up", func(s string) bool { return !strings.Contains(s, "#5000 pretty") })
}

func TestRowsAreReadOnDemand(t *testing.T) {
	src := &countingSource{memSource: bigSource(20000)}
	m := newRowModel(src)
	if m.GetRowCount() != 20001 {
		t.Fatalf("GetRowCount = %d, want 20001 (with the header)", m.GetRowCount())
	}
	for row := 19990; row <= 20000; row++ {
		for col := range columns {
			if m.GetCell(row, col) == nil {
				t.Fatalf("no cell at %d,%d", row, col)
			}
		}
	}
	if src.scanned > blockRows {
		t.Fatalf("drawing the last rows read %d records, want at most one block (%d)", src.scanned, blockRows)
	}
	for row := 1; row <= 20000; row += 100 {
		m.GetCell(row, 1)
	}
	if len(m.blocks) > maxBlocks {
		t.Fatalf("%d blocks cached, want at most %d", len(m.blocks), maxBlocks)
	}
	if got := m.GetCell(12345, 1).Text; got != "12345" {
		t.Fatalf("row 12345 shows seq %q", got)
	}
}

// countingSource counts the records a view reads.
type countingSource struct {
	*memSource
	scanned int
}

func (c *countingSource) Scan(from uint64, fn func(r *capture.Record) bool) error {
	return c.memSource.Scan(from, func(r *capture.Record) bool {
		c.scanned++
		return fn(r)
	})
}

func TestFilterBarShowsErrorPosition(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.typeKeys("f")
	h.waitFor("filter: ")
	h.typeKeys("method:x (")
	h.waitFor("^ at byte 10: expected a term")
	y := h.lineWith("filter: method:x (")
	if y < 0 {
		t.Fatal("the filter bar is not on screen")
	}
	_, bg, _ := h.style(len(filterLabel), y).Decompose()
	if bg != barBad {
		t.Fatalf("the bar's background is %v, want %v (red) on an error", bg, barBad)
	}
	// The caret points at the error: label + 10 bytes in.
	caretLine := h.lines()[h.lineWith("^ at byte 10")]
	if i := strings.Index(caretLine, "^"); i != len(filterLabel)+10 {
		t.Fatalf("caret at column %d, want %d: %q", i, len(filterLabel)+10, caretLine)
	}
	// Enter on an invalid filter stays in the bar.
	h.key(tcell.KeyEnter)
	h.waitFor("^ at byte 10")
	h.key(tcell.KeyBackspace2)
	h.key(tcell.KeyBackspace2)
	h.waitUntil("the error to clear", func(s string) bool { return !strings.Contains(s, "^ at byte") })
	_, bg, _ = h.style(len(filterLabel), y).Decompose()
	if bg == barBad {
		t.Fatal("the bar stays red on a valid filter")
	}
	// ? in the bar shows the grammar.
	h.typeKeys("?")
	h.waitFor("Filter language", "a.b.c=VALUE")
	h.key(tcell.KeyEscape)
	h.waitFor("filter: method:x")
}

func TestFilterApplies(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.typeKeys("f")
	for _, r := range "method:session/prompt or error" {
		h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	h.key(tcell.KeyEnter)
	h.waitFor("  3 shown")
	h.waitFor("fs/read_text_file [-32002]")
	if h.lineWith("initialize") >= 0 {
		t.Fatalf("a filtered-out row is still shown:\n%s", h.text())
	}
	// An empty filter shows everything again.
	h.typeKeys("f")
	h.waitFor("filter: method:session/prompt or error")
	for range "method:session/prompt or error" {
		h.key(tcell.KeyBackspace2)
	}
	h.key(tcell.KeyEnter)
	h.waitUntil("all rows", func(s string) bool { return !strings.Contains(s, "shown") && strings.Contains(s, "13 msgs") })
}

func TestPairingJump(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.resize(100, 60)
	h.typeKeys("jjjj") // #5, the session/prompt request
	h.waitFor("#5 pretty", "paired response #13")
	h.typeKeys("p")
	h.waitFor("#13 pretty", "#5 → response #13, latency 2.20s")
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
	h.waitFor("#12 pretty", "<image/png 1.8 kB>")
	if strings.Contains(h.text(), "QUJDQUJD") {
		t.Fatal("the base64 blob is shown before it is expanded")
	}
	h.typeKeys("x")
	h.waitFor("QUJDQUJD")
	h.typeKeys("x")
	h.typeKeys("G") // #13, raw view keeps the wire bytes
	h.typeKeys("r")
	h.waitFor("#13 raw", `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`)
}

func TestSearchAndMarks(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.typeKeys("/")
	h.typeKeys("resource")
	h.key(tcell.KeyEnter)
	h.waitFor("#10 pretty", "found: resource")
	h.typeKeys("n")
	h.waitFor("#10 pretty", "(wrapped)")
	h.typeKeys("/")
	h.key(tcell.KeyCtrlU)
	h.typeKeys("update:agent_message_chunk")
	h.key(tcell.KeyEnter)
	h.waitFor("#12 pretty")
	h.typeKeys("N")
	h.waitFor("#7 pretty")

	h.typeKeys("g")
	h.typeKeys("m") // marks #1, moves to #2
	h.waitFor("#2 pretty")
	h.typeKeys("jm") // marks #3
	h.typeKeys("M")
	h.waitFor("2 shown", "marked only")
	if h.lineWith("initialize") < 0 || h.lineWith("session/new") < 0 || h.lineWith("session/prompt") >= 0 {
		t.Fatalf("marked-only view shows the wrong rows:\n%s", h.text())
	}
	h.typeKeys("M")
	h.waitUntil("all rows again", func(s string) bool { return !strings.Contains(s, "marked only") })
}

func TestHelpListsEveryKey(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.resize(110, 60)
	h.typeKeys("?")
	h.waitFor("acpscope inspect — keys")
	screen := h.text()
	for _, k := range []string{"j", "k", "↑", "↓", "g", "G", "PgUp", "PgDn", "Enter", "Esc", "q", "Q", "Tab",
		"/", "n", "N", "f", "F", "p", "c", "s", "m", "M", "t", "w", "?", "r", "x", "y", "d"} {
		found := false
		for _, g := range bindings {
			for _, b := range g.keys {
				for _, field := range strings.Fields(b.keys) {
					if field == k {
						found = true
					}
				}
			}
		}
		if !found {
			t.Errorf("help does not list key %q", k)
		}
	}
	for _, g := range bindings {
		for _, b := range g.keys {
			if !strings.Contains(screen, b.what) {
				t.Errorf("help on screen lacks %q (%s)", b.what, b.keys)
			}
		}
	}
	h.key(tcell.KeyEscape)
	h.waitUntil("help to close", func(s string) bool { return !strings.Contains(s, "acpscope inspect — keys") })
}

func TestStatistics(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.resize(100, 40)
	h.typeKeys("s")
	h.waitFor("13 messages", "session/prompt", "fs/read_text_file", "p50", "latency histogram", "message rate")
	row := h.lines()[h.lineWith("fs/read_text_file")]
	if !strings.Contains(row, " 2 ") || !strings.Contains(row, " 1 ") {
		t.Errorf("fs/read_text_file row lacks its 2 messages and 1 error: %q", row)
	}
	h.key(tcell.KeyEscape)
	h.waitFor("#1 pretty")
}

func TestConversationDemo(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.typeKeys("c")
	h.waitFor("session sess_0123456789", "turn 1", "user: Read the README", "agent: Reading it now.", "stop: end_turn")
	y := h.lineWith("stop: end_turn")
	for i := 0; i < 40 && !strings.Contains(h.lines()[y], "stop"); i++ {
		h.typeKeys("j")
	}
	// Walk down to the stop line and jump to its message.
	for i := 0; i < 30; i++ {
		h.typeKeys("j")
	}
	h.key(tcell.KeyEnter)
	h.waitFor("from the conversation: message #13", "#13 pretty")
}

func TestConversationGooseFixture(t *testing.T) {
	src := fixtureSource(t, "goose-1.37.0.json")
	h := startUI(t, Options{source: src})
	h.waitFor("#1 pretty")
	h.resize(120, 50)
	h.typeKeys("c")
	h.waitFor("session 20260612_3", "turn 1", "stop: end_turn")
	h.typeKeys("jj")
	h.key(tcell.KeyEnter)
	h.waitFor("from the conversation: message #")
}

func TestFollowMode(t *testing.T) {
	src := newLiveMem("live-agent")
	for i := 0; i < 5; i++ {
		src.arrive(wire.DirClient, fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d}}`, i))
	}
	h := startUI(t, Options{source: src})
	h.waitFor("● live", "follow", "5 msgs")
	h.typeKeys("G")
	h.waitFor("#5 pretty")
	for i := 5; i < 60; i++ {
		src.arrive(wire.DirAgent, fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d}}`, i))
	}
	// Following: the selection moves with the newest row.
	h.waitFor("60 msgs", "#60 pretty")

	// Scrolled up: rows arrive, the selected row stays put on screen.
	h.typeKeys("kkk")
	h.waitFor("#57 pretty")
	y := h.lineWith(" 57 ")
	for i := 60; i < 90; i++ {
		src.arrive(wire.DirAgent, fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d}}`, i))
	}
	h.waitFor("90 msgs")
	if h.lineWith("#57 pretty") < 0 {
		t.Fatal("the selection moved when rows arrived")
	}
	if got := h.lineWith(" 57 "); got != y {
		t.Fatalf("the selected row moved on screen from line %d to %d", y, got)
	}
	// G resumes following.
	h.typeKeys("G")
	h.waitFor("#90 pretty")
	src.arrive(wire.DirAgent, `{"jsonrpc":"2.0","method":"note","params":{"i":90}}`)
	h.waitFor("#91 pretty")

	// The proxy exits: the marker turns finished.
	src.finish()
	h.waitFor("finished, exit 0", "the proxy finished")
	if strings.Contains(h.text(), "● live") {
		t.Fatal("still marked live after the feed ended")
	}
}

func TestSmallAndResizedTerminal(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty", "? help")
	lines := h.lines()
	if len(lines) != 24 || !strings.Contains(lines[0], "demo-agent") || !strings.Contains(lines[23], "? help") {
		t.Fatalf("80×24 does not show the title and key hints:\n%s", h.text())
	}
	h.resize(30, 8)
	h.typeKeys("jjj")
	h.resize(120, 40)
	h.waitFor("#4 pretty")
}

func TestNoTerminal(t *testing.T) {
	err := Run(Options{Dir: t.TempDir()})
	if !errors.Is(err, ErrNoTerminal) {
		t.Fatalf("Run without a terminal = %v, want ErrNoTerminal", err)
	}
	if !strings.Contains(err.Error(), "acpscope dump") {
		t.Fatalf("the error does not say what to do instead: %v", err)
	}
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
	env := &wire.Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: wire.StreamPOST,
		ConnectionID: "conn-1", SessionID: "sess_0123456789", Headers: map[string]string{"Authorization": "<redacted>"}}
	src.recs[4].HTTP = env
	h := startUI(t, Options{source: src})
	h.resize(100, 50)
	h.waitFor("#1 pretty")
	// The lint finding marks its row and is explained in the detail pane.
	if row := h.lines()[h.lineWith("this is not json")]; !strings.Contains(row, "✖") {
		t.Fatalf("the row with an error finding is not marked: %q", row)
	}
	h.typeKeys("G")
	h.typeKeys("kk") // #11
	h.waitFor("#11 pretty", "error jsonrpc/not-json: a line on stdout is not JSON-RPC", "this is not json")
	h.typeKeys("g")
	h.typeKeys("jjjj") // #5 travelled over HTTP
	h.waitFor("#5 pretty", "http POST /acp → 202  stream post  Acp-Connection-Id conn-1", "Authorization: <redacted>")
}

func TestLiveFilterAppendsMatches(t *testing.T) {
	src := newLiveMem("live-agent")
	src.arrive(wire.DirClient, `{"jsonrpc":"2.0","method":"keep","params":{"i":0}}`)
	src.arrive(wire.DirClient, `{"jsonrpc":"2.0","method":"drop","params":{"i":1}}`)
	h := startUI(t, Options{source: src})
	h.waitFor("● live", "2 msgs")
	h.typeKeys("f")
	h.typeKeys("method:keep")
	h.key(tcell.KeyEnter)
	h.waitFor("  1 shown")
	for i := 2; i < 12; i++ {
		method := "drop"
		if i%2 == 0 {
			method = "keep"
		}
		src.arrive(wire.DirAgent, fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"i":%d}}`, method, i))
	}
	h.waitFor("12 msgs", "  6 shown")
	// Following within the filter: the newest match is selected.
	h.waitFor("#11 pretty")
	if h.lineWith("drop") >= 0 {
		t.Fatalf("a filtered-out live row is shown:\n%s", h.text())
	}
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
