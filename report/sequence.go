package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/replay"
	"github.com/acpscope/acpscope/wire"
)

// The sequence diagram's geometry, in SVG user units.
const (
	seqWidth   = 820
	seqClientX = 150
	seqAgentX  = 700
	seqTop     = 64
	seqRow     = 26
)

// diagram draws the conversation as an SVG sequence diagram: one arrow
// per message, as the Mermaid export draws it (requests solid, answers
// dashed, notifications with an open head, errors red), runs of message
// chunks folded into one arrow, each arrow a link to its message. It
// draws at most maxArrows and returns how many it drew of how many.
func diagram(msgs []protocol.Msg, maxArrows int) (template.HTML, int, int) {
	items := replay.Fold(replay.Protocol(msgs), false)
	n := min(len(items), maxArrows)
	if n == 0 {
		return "", 0, 0
	}
	height := seqTop + n*seqRow + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="seq" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="sequence diagram">`, seqWidth, height, seqWidth, height)
	b.WriteString(`<defs>` +
		`<marker id="h-solid" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker>` +
		`<marker id="h-open" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0L10,5L0,10" fill="none" stroke="currentColor"/></marker>` +
		`<marker id="h-x" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="9" markerHeight="9"><path d="M1,1L9,9M9,1L1,9" stroke="#c0392b" stroke-width="2"/></marker>` +
		`</defs>`)
	for _, p := range []struct {
		x    int
		name string
	}{{seqClientX, "Client"}, {seqAgentX, "Agent"}} {
		fmt.Fprintf(&b, `<rect class="actor" x="%d" y="8" width="120" height="30" rx="4"/><text class="actor" x="%d" y="28">%s</text>`, p.x-60, p.x, p.name)
		fmt.Fprintf(&b, `<line class="life" x1="%d" y1="38" x2="%d" y2="%d"/>`, p.x, p.x, height-8)
	}
	for i := 0; i < n; i++ {
		arrow(&b, &items[i], seqTop+i*seqRow)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), n, len(items)
}

// arrow draws one item at height y.
func arrow(b *strings.Builder, it *replay.Item, y int) {
	m := it.First()
	x1, x2 := seqClientX, seqAgentX
	if m.Dir == wire.DirAgent {
		x1, x2 = x2, x1
	}
	class, head := "req", "h-solid"
	switch {
	case m.Kind == wire.KindError:
		class, head = "err", "h-x"
	case m.Kind.IsResponse():
		class = "res"
	case m.Kind == wire.KindNotification:
		class, head = "note", "h-open"
	}
	label := it.Summary()
	if len(m.ID) > 0 && (m.Kind == wire.KindRequest || m.Kind.IsResponse()) {
		label += " [" + strings.Trim(string(m.ID), `"`) + "]"
	}
	esc := template.HTMLEscapeString
	fmt.Fprintf(b, `<a class="arrow %s" href="#m%d"><title>#%d %s</title>`, class, m.Seq, m.Seq, esc(label))
	fmt.Fprintf(b, `<text class="seqno" x="8" y="%d">#%d</text>`, y+4, m.Seq)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#%s)"/>`, x1, y, x2, y, head)
	fmt.Fprintf(b, `<text class="label" x="%d" y="%d">%s</text></a>`, (x1+x2)/2, y-5, esc(cut(label, 90)))
}
