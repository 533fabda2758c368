package replay

import (
	"fmt"
	"io"
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// WriteMermaid draws the conversation as a Mermaid sequence diagram for
// pasting into an issue: one arrow per message (requests solid, responses
// dashed, notifications async, errors crossed), chunk runs folded into one
// arrow ("agent_message_chunk ×12").
func WriteMermaid(w io.Writer, msgs []protocol.Msg) error {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n    participant C as Client\n    participant A as Agent\n")
	items := fold(msgs, false, true)
	for i := range items {
		it := &items[i]
		m := it.First()
		from, to := "C", "A"
		if m.Dir == wire.DirAgent {
			from, to = "A", "C"
		}
		fmt.Fprintf(&b, "    %s%s%s: %s\n", from, arrow(m), to, mermaidText(label(it)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func arrow(m *protocol.Msg) string {
	switch {
	case m.Kind == wire.KindError:
		return "--x"
	case m.Kind.IsResponse():
		return "-->>"
	case m.Kind == wire.KindNotification:
		return "-)"
	}
	return "->>"
}

// label is the arrow's text: the summary, with the request id so a reader
// can pair requests and answers.
func label(it *Item) string {
	m := it.First()
	s := it.Summary()
	if len(m.ID) > 0 && (m.Kind == wire.KindRequest || m.Kind.IsResponse()) {
		s += " [" + strings.Trim(string(m.ID), `"`) + "]"
	}
	return s + faultMark(m)
}

// mermaidText keeps a label on one line and away from Mermaid's syntax:
// ";" ends a statement and "#" starts an entity code.
func mermaidText(s string) string {
	s = oneLine(s)
	return strings.NewReplacer(";", ",", "#", "no.", "%%", "%").Replace(s)
}
