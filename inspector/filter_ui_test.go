package inspector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
)

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
	h.resize(100, 24) // room for whole method names beside the 12-wide session ids
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

func TestSearchAndMarks(t *testing.T) {
	h := startUI(t, Options{source: demoSource()})
	h.waitFor("#1 pretty")
	h.typeKeys("/")
	h.typeKeys("resource")
	h.key(tcell.KeyEnter)
	h.waitFor("#10 pretty", "/resource 1/1")
	h.typeKeys("n")
	h.waitFor("#10 pretty", "search wrapped to the top")
	h.typeKeys("/")
	h.key(tcell.KeyCtrlU)
	h.typeKeys("update:agent_message_chunk")
	h.key(tcell.KeyEnter)
	// Matches #6, #7 and #12: the first after #10 is the third.
	h.waitFor("#12 pretty", "/update:agent_message_chunk 3/3")
	h.typeKeys("N")
	h.waitFor("#7 pretty", " 2/3")
	h.typeKeys("N")
	h.waitFor("#6 pretty", " 1/3")
	h.typeKeys("N")
	h.waitFor("#12 pretty", " 3/3", "search wrapped to the bottom")
	h.typeKeys("k") // off a match, the count stays
	h.waitFor("#11 pretty", "/update:agent_message_chunk 3 found")
	h.typeKeys("n")
	h.waitFor("#12 pretty", " 3/3")
	// Within a filter the count is of the rows shown.
	h.typeKeys("f")
	h.typeKeys("seq<7 or seq>7")
	h.key(tcell.KeyEnter)
	h.waitFor("12 shown", "/update:agent_message_chunk 2/2")
	h.typeKeys("f")
	h.key(tcell.KeyCtrlU)
	h.key(tcell.KeyEnter)
	h.waitUntil("the filter cleared", func(s string) bool { return !strings.Contains(s, "shown") })

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
