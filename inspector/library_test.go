package inspector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
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
