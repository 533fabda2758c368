package inspector

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/gdamore/tcell/v2"
)

func TestLibrary(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1_780_000_000, 0)
	older := writeCaptureAt(t, dir, "older"+capture.Ext, "old-agent", start, demoLines()[:4])
	newer := writeCaptureAt(t, dir, "newer"+capture.Ext, "new-agent", start.Add(time.Hour), demoLines())
	if err := os.WriteFile(filepath.Join(dir, "broken"+capture.Ext), []byte("not a capture"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startUI(t, Options{Dir: dir})
	h.resize(120, 30)
	h.waitFor("captures in", "new-agent", "old-agent", "unreadable")
	if h.lineWith("new-agent") > h.lineWith("old-agent") {
		t.Fatalf("captures are not newest first:\n%s", h.text())
	}
	// The selected capture is grouped into its connection and sessions,
	// with the title session_info_update gave.
	h.waitFor("connection 0", "session sess_42", "Bug hunt")

	// Enter on a session opens the capture filtered to it.
	h.typeKeys("jj")
	h.key(tcell.KeyEnter)
	h.waitFor("newer"+capture.Ext, "shown", "session/prompt")
	h.typeKeys("f")
	h.waitFor("filter: session:sess_42")
	h.key(tcell.KeyEscape)
	// Esc goes back to the library.
	h.key(tcell.KeyEscape)
	h.waitFor("captures in", "old-agent")

	// A broken file gives a message, not a crash.
	h.key(tcell.KeyEnd)
	h.key(tcell.KeyEnter)
	h.waitUntil("a message about the broken file", func(s string) bool {
		return strings.Contains(s, "cannot open") || strings.Contains(s, "opening broken")
	})

	// Delete asks first; Cancel keeps the file, Delete removes it.
	h.key(tcell.KeyHome)
	h.waitFor("connection 0")
	h.typeKeys("d")
	h.waitFor("Delete newer" + capture.Ext)
	h.key(tcell.KeyEnter) // Cancel is focused first
	h.waitFor("kept newer" + capture.Ext)
	if _, err := os.Stat(newer); err != nil {
		t.Fatalf("cancel deleted the file: %v", err)
	}
	h.typeKeys("d")
	h.waitFor("Delete newer" + capture.Ext)
	h.key(tcell.KeyTab)
	h.key(tcell.KeyEnter)
	h.waitFor("deleted newer" + capture.Ext)
	if _, err := os.Stat(newer); !os.IsNotExist(err) {
		t.Fatalf("the capture was not deleted: %v", err)
	}
	if _, err := os.Stat(older); err != nil {
		t.Fatalf("the other capture went too: %v", err)
	}
	h.waitUntil("the list without it", func(s string) bool { return !strings.Contains(s, "new-agent") })
}

func TestLibraryEmpty(t *testing.T) {
	h := startUI(t, Options{Dir: filepath.Join(t.TempDir(), "none")})
	h.waitFor("no captures yet", "acpscope demo")
	h.typeKeys("q")
	select {
	case err := <-h.done:
		h.quit = true
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("q in the library did not quit")
	}
}

// TestLibraryRefreshesItself: captures that appear, change and go show
// without R, and the selection stays on its capture.
func TestLibraryRefreshesItself(t *testing.T) {
	dir := t.TempDir()
	start := time.Now().Add(-time.Hour)
	first := writeCaptureAt(t, dir, "first"+capture.Ext, "first-agent", start, demoLines()[:4])
	h := startUI(t, Options{Dir: dir})
	h.waitFor("first-agent")
	h.waitFor("connection 0")
	second := writeCaptureAt(t, dir, "second"+capture.Ext, "second-agent", start.Add(time.Minute), demoLines())
	h.waitFor("second-agent", "first-agent")
	if h.lineWith("second-agent") > h.lineWith("first-agent") {
		t.Fatalf("the new capture is not listed first:\n%s", h.text())
	}
	h.waitFor("first" + capture.Ext) // the selection stayed on the first capture
	if err := capture.SaveFindings(second, []protocol.Finding{{Rule: "r", Severity: protocol.Warning, Message: "m", Seqs: []uint64{1}}}); err != nil {
		t.Fatal(err)
	}
	h.waitUntil("the lint count of the second capture", func(string) bool {
		return strings.Contains(h.lines()[h.lineWith("second-agent")], "lint 1")
	})
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	h.waitUntil("the deleted capture to go", func(s string) bool { return !strings.Contains(s, "first-agent") })
	h.waitFor("second" + capture.Ext)
}

// TestLibraryUncleanCapture: a capture whose proxy was SIGKILLed leaves
// the list's live state for unclean, without R, with the time it ran at
// least.
func TestLibraryUncleanCapture(t *testing.T) {
	dir := t.TempDir()
	p := startProxy(t, filepath.Join(dir, "killed"+capture.Ext))
	h := startUI(t, Options{Dir: dir})
	h.waitFor("demo", "● live")
	// Something to record before the kill: the initialize exchange.
	if _, err := p.toAgent.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.fromAgent).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":0`) {
		t.Fatalf("no answer to initialize: %q, %v", line, err)
	}
	h.waitUntil("the live capture to hold the exchange", func(string) bool {
		y := h.lineWith("● live")
		return y >= 0 && regexp.MustCompile(` [2-9] +\d+\.\d [KM]iB`).MatchString(h.lines()[y])
	})
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	h.waitFor("unclean")
	row := h.lines()[h.lineWith("unclean")]
	if strings.Contains(row, "live") || strings.Contains(row, "finished") || !strings.Contains(row, "≥") {
		t.Fatalf("the killed capture reads %q, want unclean with the time it ran at least", row)
	}
	h.key(tcell.KeyEnter)
	h.waitFor("killed"+capture.Ext, "unclean", "initialize")
}

// TestLibraryColumnsAlign: agent names of any length leave the other
// columns where they are, at 80 columns.
func TestLibraryColumnsAlign(t *testing.T) {
	dir := t.TempDir()
	start := time.Now().Add(-time.Hour)
	agents := []string{"a", "claude-code-acp", "an-agent-with-a-name-far-too-long-for-any-column"}
	for i, agent := range agents {
		writeCaptureAt(t, dir, agent+capture.Ext, agent, start.Add(time.Duration(i)*time.Minute), demoLines()[:2*i+2])
	}
	h := startUI(t, Options{Dir: dir})
	h.waitFor("claude-code-acp", "an-agent-with-…", "finished")
	// One snapshot for the header and every row: the library may still
	// be drawing (a selected capture's connections open under it), and
	// rows read from two frames need not line up.
	lines := h.lines()
	header := lines[slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "duration") })]
	col := func(line, word string) int { return utf8.RuneCountInString(line[:max(strings.Index(line, word), 0)]) }
	for _, agent := range []string{"a ", "claude-code-acp", "an-agent-with"} {
		y := -1
		for i, l := range lines {
			if strings.Contains(l, " "+agent) && strings.Contains(l, "finished") {
				y = i
			}
		}
		if y < 0 {
			t.Fatalf("no line for agent %q:\n%s", agent, strings.Join(lines, "\n"))
		}
		line := lines[y]
		if col(line, "finished") != col(header, "state") || col(line, "KiB") != col(header, "size")+1 {
			t.Errorf("agent %q: the state or size column moved:\n%s\n%s", agent, header, line)
		}
	}
}

// TestEightyColumnsKeepKeysAndState: capture files have long names; at
// 80 columns it is the name that is cut, never the keys of the library's
// status line or the agent, state and count of the capture's title.
func TestEightyColumnsKeepKeysAndState(t *testing.T) {
	dir := t.TempDir()
	writeCaptureAt(t, dir, "20261124T001625Z-acpscope-demo-agent-8005"+capture.Ext, "acpscope-demo-agent", time.Unix(1_780_000_000, 0), demoLines())
	h := startUI(t, Options{Dir: dir})
	h.waitFor("acpscope-demo")
	h.key(tcell.KeyDown)
	h.waitFor("Q quit")
	h.key(tcell.KeyEnter)
	h.waitFor("#1 pretty")
	title := h.lines()[0]
	for _, want := range []string{"acpscope-demo-agent", "finished", "msgs"} {
		if !strings.Contains(title, want) {
			t.Errorf("the title at 80 columns lacks %q: %q", want, title)
		}
	}
}
