package inspector

import (
	"runtime"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
)

// TestNoGoroutineLeak: after Run returns, every worker, the poster and
// the follower are gone, even with work in flight at quit.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	src := newLiveMem("leaky")
	for i := 0; i < 3; i++ {
		src.arrive(wire.DirClient, `{"jsonrpc":"2.0","method":"note","params":{}}`)
	}
	h := startUI(t, Options{source: src})
	h.waitFor("● live")
	h.typeKeys("s")
	h.waitFor("message rate")
	h.key(tcell.KeyEscape)
	h.typeKeys("c")
	h.key(tcell.KeyEscape)
	h.typeKeys("f")
	h.typeKeys("note")
	h.key(tcell.KeyEnter) // a live filter worker keeps running
	h.typeKeys("/")
	h.typeKeys("nothing-matches-this")
	h.key(tcell.KeyEnter)
	h.stop()
	waitGoroutines(t, before)
}

// TestLibraryNoGoroutineLeak: the library's watcher and grouper end with
// Run, also after a capture was opened and closed.
func TestLibraryNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	writeCapture(t, dir, "one"+capture.Ext, demoLines())
	h := startUI(t, Options{Dir: dir})
	h.waitFor("connection 0")
	h.key(tcell.KeyEnter)
	h.waitFor("#1 pretty")
	h.key(tcell.KeyEscape)
	h.waitFor("connection 0")
	h.typeKeys("R")
	h.stop()
	waitGoroutines(t, before)
}

// waitGoroutines waits until no more goroutines run than before.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines before, %d still %v after Run returned:\n%s", before, runtime.NumGoroutine(), waitLimit, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
