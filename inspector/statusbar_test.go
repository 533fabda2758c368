package inspector

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
)

// stateLine is the status bar: the second row from the bottom.
func (h *harness) stateLine() string {
	lines := h.lines()
	return lines[len(lines)-2]
}

// waitState waits until the status bar shows every want.
func (h *harness) waitState(want ...string) {
	h.t.Helper()
	h.waitUntil("the status bar to show "+strings.Join(want, " & "), func(string) bool {
		line := h.stateLine()
		for _, w := range want {
			if !strings.Contains(line, w) {
				return false
			}
		}
		return true
	})
}

// TestStatusBarShowsModeAndFilter: the applied filter, the pane with the
// keys and the time mode stay on screen, not just a bare "filter:".
func TestStatusBarShowsModeAndFilter(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.waitState("TABLE", "no filter")
	h.typeKeys("f")
	h.typeKeys("method:session/prompt")
	h.key(tcell.KeyEnter)
	h.waitFor("2 shown")
	h.waitState("TABLE", "filter: method:session/prompt")
	h.key(tcell.KeyTab)
	h.waitState("DETAIL", "filter: method:session/prompt")
	h.key(tcell.KeyTab)
	h.typeKeys("t")
	h.waitState("TABLE", "Δt")
	h.key(tcell.KeyEnter)
	h.waitState("DETAIL full")
}

// TestStatusBarCountsNewRows: scrolled up in a followed live capture, the
// status bar counts the rows that arrived below; G goes to them.
func TestStatusBarCountsNewRows(t *testing.T) {
	src := newLiveMem("live-agent")
	note := func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d}}`, i) }
	for i := 0; i < 10; i++ {
		src.arrive(wire.DirClient, note(i))
	}
	h := startUI(t, Options{source: src})
	h.waitFor("#10 pretty")
	h.waitState("● following")
	h.typeKeys("kk")
	h.waitFor("#8 pretty")
	h.waitState("follow paused")
	for i := 10; i < 40; i++ {
		src.arrive(wire.DirAgent, note(i))
	}
	h.waitFor("40 msgs")
	h.waitState("follow paused", "▼ 30 new")
	h.typeKeys("G")
	h.waitFor("#40 pretty")
	h.waitState("● following")
	if strings.Contains(h.stateLine(), "new") {
		t.Fatalf("the new rows are still counted at the bottom: %q", h.stateLine())
	}
	// With follow off, arrivals are counted even at the bottom.
	h.typeKeys("F")
	h.waitState("follow off")
	src.arrive(wire.DirAgent, note(40))
	h.waitState("follow off", "▼ 1 new")
}

// TestGoToSequence: ':' and a number select that message, leaving a
// filter that hides it; a bad number says what to type.
func TestGoToSequence(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.typeKeys(":")
	h.waitFor("go to #")
	h.typeKeys("12")
	h.key(tcell.KeyEnter)
	h.waitFor("#12 pretty", "message #12")
	h.typeKeys(":#3")
	h.key(tcell.KeyEnter)
	h.waitFor("#3 pretty")

	h.typeKeys("f")
	h.typeKeys("error")
	h.key(tcell.KeyEnter)
	h.waitFor("1 shown")
	h.typeKeys(":5")
	h.key(tcell.KeyEnter)
	h.waitFor("#5 pretty", "message #5: left the filter that hid it")
	h.waitState("no filter")

	h.typeKeys(":x")
	h.waitFor(`"x" is not a message number`)
	h.key(tcell.KeyEscape)
	h.typeKeys(":99")
	h.key(tcell.KeyEnter)
	h.waitFor("there is no message #99: this capture has 13")
}

// TestFindingsView: the findings lint stored with a capture are listed,
// worst first, and Enter jumps to the message a finding names.
func TestFindingsView(t *testing.T) {
	path := writeCapture(t, t.TempDir(), "linted"+capture.Ext, demoLines())
	err := capture.SaveFindings(path, []protocol.Finding{
		{Rule: "acp/tool-call-id", Severity: protocol.Warning, Message: "tool_call_update for a tool call never announced", Seqs: []uint64{9}},
		{Rule: "jsonrpc/id-reuse", Severity: protocol.Error, Message: "request id 2 reused while pending", Seqs: []uint64{5, 11}, Ref: "JSON-RPC 2.0 §4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := startUI(t, Options{Path: path})
	h.waitFor("#1 pretty")
	h.typeKeys("l")
	h.waitFor("2 findings: 1 error, 1 warning", "jsonrpc/id-reuse", "#5 #11", "acp/tool-call-id", "#9")
	if h.lineWith("jsonrpc/id-reuse") > h.lineWith("acp/tool-call-id") {
		t.Fatalf("the error is not listed before the warning:\n%s", h.text())
	}
	h.waitFor("request id 2 reused while pending", "see JSON-RPC 2.0 §4")
	h.key(tcell.KeyEnter)
	h.waitFor("#5 pretty", "error jsonrpc/id-reuse at #5; also #11")
	// The table marks the rows the findings name.
	for seq, mark := range map[int]string{5: "✖", 9: "▲", 11: "✖"} {
		row := regexp.MustCompile(fmt.Sprintf(`(?m)^(.*) %d \d\d:\d\d`, seq)).FindStringSubmatch(h.text())
		if row == nil || !strings.Contains(row[1], mark) {
			t.Errorf("row %d is not marked %s: %q", seq, mark, row)
		}
	}
	h.typeKeys("l")
	h.waitFor("2 findings")
	h.typeKeys("j")
	h.key(tcell.KeyEnter)
	h.waitFor("#9 pretty", "warning acp/tool-call-id at #9")
}

// TestFindingsNeverLinted: a capture lint never saw says how to lint it.
func TestFindingsNeverLinted(t *testing.T) {
	path := writeCapture(t, t.TempDir(), "fresh"+capture.Ext, demoLines())
	h := startUI(t, Options{Path: path})
	h.waitFor("#1 pretty")
	h.typeKeys("l")
	h.waitFor("never linted: `acpscope lint " + filepath.Base(path) + "`")
}
