package inspector

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
)

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
	// A live capture opens at its newest message.
	h.waitFor("● live", "follow", "5 msgs", "#5 pretty")
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

func TestConversationFollowsFilter(t *testing.T) {
	src := demoSource()
	// A second session, which the filter leaves out.
	src.add(wire.DirClient, src.meta.Start.Add(5*time.Second), `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"other_session","prompt":[{"type":"text","text":"Another question"}]}}`, false)
	h := startUI(t, Options{source: src})
	h.waitFor("#1 pretty")
	h.typeKeys("c")
	h.waitFor("session sess_0123456789", "session other_session", "Another question")
	h.key(tcell.KeyEscape)
	h.typeKeys("f")
	h.typeKeys("session:sess_")
	h.key(tcell.KeyEnter)
	h.waitFor("shown")
	h.typeKeys("c")
	h.waitFor("conversation of session:sess_", "user: Read the README")
	if strings.Contains(h.text(), "other_session") {
		t.Fatalf("the filtered conversation shows another session:\n%s", h.text())
	}
}

// TestConversationDiffIsUnified: an edit shows the lines it changed with
// three lines of context under an @@ header, not the whole old file with
// - and the whole new file with +.
func TestConversationDiffIsUnified(t *testing.T) {
	var oldText, newText strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&oldText, "line %d\n", i)
		if i == 15 {
			newText.WriteString("line fifteen\n")
			continue
		}
		fmt.Fprintf(&newText, "line %d\n", i)
	}
	content, _ := json.Marshal([]map[string]string{{"type": "diff", "path": "notes.txt", "oldText": oldText.String(), "newText": newText.String()}})
	src := newMemSource("edit-agent")
	at := src.meta.Start
	src.add(wire.DirClient, at, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"edit it"}]}}`, false)
	src.add(wire.DirAgent, at.Add(time.Millisecond), `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit notes","kind":"edit","status":"completed","content":`+string(content)+`}}}`, false)
	src.add(wire.DirAgent, at.Add(2*time.Millisecond), `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`, false)
	h := startUI(t, Options{source: src})
	h.waitFor("#1 pretty")
	h.typeKeys("c")
	h.waitFor("diff notes.txt", "@@ -12,7 +12,7 @@", " line 12", "-line 15", "+line fifteen", " line 18")
	for _, l := range h.lines() {
		l = strings.Trim(l, " ║")
		for _, unchanged := range []string{"-line 1", "+line 1", "line 11", "line 19", "-line 30", "+line 30"} {
			if l == unchanged {
				t.Errorf("the diff shows %q, outside the change and its context:\n%s", l, h.text())
			}
		}
	}
}
