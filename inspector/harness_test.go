package inspector

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

// harness runs the inspector on a simulation screen, drives keys and reads
// the screen back.
type harness struct {
	t    testing.TB
	sim  tcell.SimulationScreen
	done chan error
	quit bool
	app  *app
}

// contents copies the screen on the UI goroutine: the simulation screen
// is only consistent between draws.
func (h *harness) contents() (cells []tcell.SimCell, w, ht int) {
	h.app.tv.QueueUpdate(func() {
		c, cw, ch := h.sim.GetContents()
		cells = make([]tcell.SimCell, len(c))
		for i := range c {
			cells[i] = tcell.SimCell{Style: c[i].Style, Runes: append([]rune(nil), c[i].Runes...)}
		}
		w, ht = cw, ch
	})
	return cells, w, ht
}

// waitLimit bounds every wait for the screen or Run: generous, since the
// machines the tests run on are shared and busy (a 21 MB message took
// over 10 s to load on a loaded 2-core machine); a passing wait returns as
// soon as its condition holds.
const waitLimit = 2 * time.Minute

func startUI(t testing.TB, opts Options) *harness {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	opts.Screen = sim
	h := &harness{t: t, sim: sim, done: make(chan error, 1)}
	ready := make(chan *app, 1)
	opts.ready = func(a *app) { ready <- a }
	go func() { h.done <- Run(opts) }()
	// Keys can only be injected once Run has initialised the screen.
	select {
	case h.app = <-ready:
	case err := <-h.done:
		t.Fatalf("Run returned early: %v", err)
	case <-time.After(waitLimit):
		t.Fatalf("the inspector did not start within %v", waitLimit)
	}
	h.resize(80, 24)
	t.Cleanup(h.stop)
	return h
}

func (h *harness) resize(w, ht int) {
	h.sim.SetSize(w, ht)
	h.sim.PostEvent(tcell.NewEventResize(w, ht))
}

func (h *harness) key(k tcell.Key) { h.sim.InjectKey(k, 0, tcell.ModNone) }

// typeKeys injects each rune as a key press.
func (h *harness) typeKeys(s string) {
	for _, r := range s {
		h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
}

// lines returns the screen's text, one string per row.
func (h *harness) lines() []string {
	cells, w, ht := h.contents()
	out := make([]string, 0, ht)
	for y := 0; y < ht; y++ {
		var b strings.Builder
		for x := 0; x < w; x++ {
			i := y*w + x
			if i >= len(cells) {
				break
			}
			if len(cells[i].Runes) == 0 {
				b.WriteByte(' ')
				continue
			}
			b.WriteString(string(cells[i].Runes))
		}
		out = append(out, b.String())
	}
	return out
}

func (h *harness) text() string { return strings.Join(h.lines(), "\n") }

// waitFor waits until the screen shows all of want.
func (h *harness) waitFor(want ...string) {
	h.t.Helper()
	h.waitUntil(strings.Join(want, " & "), func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
}

func (h *harness) waitUntil(what string, cond func(screen string) bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		s := h.text()
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("after %v still waiting for %s; the screen shows:\n%s", waitLimit, what, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lineWith returns the first screen row containing s, or -1.
func (h *harness) lineWith(s string) int {
	for i, l := range h.lines() {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}

// style returns the style of the cell at x, y.
func (h *harness) style(x, y int) tcell.Style {
	cells, w, _ := h.contents()
	return cells[y*w+x].Style
}

// stop quits with Q and checks that Run returns cleanly.
func (h *harness) stop() {
	if h.quit {
		return
	}
	h.quit = true
	h.sim.InjectKey(tcell.KeyCtrlC, 0, tcell.ModNone)
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(waitLimit):
		h.t.Errorf("Run did not return within %v of Ctrl-C", waitLimit)
	}
}
