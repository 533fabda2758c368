package inspector

import (
	"errors"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

func TestNavigation(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.resize(100, 24) // room for whole method names beside the 12-wide session ids
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
	h.waitFor("+25ms", "Δt")
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

func TestHelpListsEveryKey(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.resize(110, 60)
	h.typeKeys("?")
	h.waitFor("acpscope inspect — keys")
	screen := h.text()
	for _, k := range []string{"j", "k", "↑", "↓", "g", "G", "PgUp", "PgDn", "Enter", "Esc", "q", "Q", "Tab",
		"/", "n", "N", "f", "F", "p", "c", "s", "m", "M", "t", "w", "?", "b", "x", "y", "d", ":", "l", "R", "r", "i", "h", "S", "I", "e"} {
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
	for _, line := range strings.Split(helpText(), "\n") {
		if w := tview.TaggedStringWidth(line); w > 78 {
			t.Errorf("help line is %d cells, wider than an 80-column terminal's box: %q", w, line)
		}
	}
	h.key(tcell.KeyEscape)
	h.waitUntil("help to close", func(s string) bool { return !strings.Contains(s, "acpscope inspect — keys") })
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
