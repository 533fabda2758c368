package inspector

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// column is one column of the message table.
type column struct {
	name   string
	title  string
	max    int // maximum width, 0 for none
	expand int
	right  bool
}

var columns = []column{
	{name: "mark", title: " ", max: 2},
	{name: "seq", title: "#", max: 8, right: true},
	{name: "time", title: "time", max: 12},
	{name: "dir", title: "", max: 1},
	{name: "kind", title: "kind", max: 6},
	{name: "id", title: "id", max: 6},
	{name: "method", title: "method", expand: 1, max: 40},
	{name: "session", title: "session", max: 12},
	{name: "size", title: "size", max: 10, right: true},
	{name: "latency", title: "latency", max: 9, right: true},
}

// Colours of the table and detail pane.
var (
	colorClient  = tcell.ColorGreen
	colorAgent   = tcell.ColorDodgerBlue
	colorError   = tcell.ColorRed
	colorInvalid = tcell.ColorFuchsia
	colorDim     = tcell.ColorGray
	colorWarn    = tcell.ColorYellow
	colorMark    = tcell.ColorOrange
)

func headerCell(c column) *tview.TableCell {
	cell := tview.NewTableCell(c.title).SetSelectable(false).
		SetAttributes(tcell.AttrBold).SetTextColor(tcell.ColorYellow)
	if c.right {
		cell.SetAlign(tview.AlignRight)
	}
	if c.expand > 0 {
		cell.SetExpansion(c.expand)
	}
	return cell
}

var kindAbbrev = map[wire.Kind]string{
	wire.KindRequest:      "req",
	wire.KindNotification: "notif",
	wire.KindResponse:     "resp",
	wire.KindError:        "error",
	wire.KindBatch:        "batch",
	wire.KindInvalidJSON:  "badjsn",
	wire.KindNonProtocol:  "nonrpc",
	wire.KindInvalidUTF8:  "badutf",
	wire.KindStderr:       "stderr",
}

func (m *rowModel) cell(c column, ri, prev *rowInfo) *tview.TableCell {
	r := &ri.rec
	text := ""
	color := tcell.ColorWhite
	switch c.name {
	case "mark":
		text = m.markText(r.Seq)
		color = colorMark
		if sev := m.findings[r.Seq]; sev != "" {
			color = severityColor(sev)
		}
	case "seq":
		text = fmt.Sprint(r.Seq)
	case "time":
		if prev != nil {
			text = "+" + human.Duration(time.Duration(r.Time-prev.rec.Time))
		} else {
			text = r.When().Format("15:04:05.000")
		}
	case "dir":
		text, color = r.Dir.Arrow(), colorClient
		if r.Dir == wire.DirAgent {
			color = colorAgent
		}
	case "kind":
		text = kindAbbrev[r.Kind]
		if _, ok := r.HTTP.Exchange(); ok {
			text = "http"
		}
	case "id":
		text = string(r.ID)
	case "method":
		text = methodText(ri)
	case "session":
		text = human.ShortID(r.Session)
	case "size":
		text = human.Size(r.Size)
	case "latency":
		if r.Latency > 0 && (r.Kind == wire.KindResponse || r.Kind == wire.KindError) {
			text = human.Duration(r.Latency)
		}
	}
	cell := tview.NewTableCell(tview.Escape(text)).SetTextColor(color).SetMaxWidth(c.max)
	if c.right {
		cell.SetAlign(tview.AlignRight)
	}
	if c.expand > 0 {
		cell.SetExpansion(c.expand)
	}
	if c.name != "mark" && c.name != "dir" {
		if rc, ok := rowColor(ri, m.findings[r.Seq]); ok {
			cell.SetTextColor(rc)
		}
	}
	if r.Kind == wire.KindStderr {
		cell.SetAttributes(tcell.AttrDim)
	}
	return cell
}

func (m *rowModel) markText(seq uint64) string {
	s := " "
	if m.marks[seq] {
		s = "*"
	}
	switch m.findings[seq] {
	case "error":
		return s + "✖"
	case "warning":
		return s + "▲"
	case "info":
		return s + "·"
	}
	return s
}

// rowColor is the colour a whole row takes: errors red, invalid frames
// magenta, stderr grey, rows with lint findings by severity.
func rowColor(ri *rowInfo, severity string) (tcell.Color, bool) {
	if _, ok := ri.rec.HTTP.Exchange(); ok {
		if ri.rec.HTTP.Status >= 400 {
			return colorError, true // the proxy or agent refused: a failure, not bookkeeping
		}
		return colorDim, true // transport bookkeeping, not a bad frame
	}
	switch ri.rec.Kind {
	case wire.KindError:
		return colorError, true
	case wire.KindInvalidJSON, wire.KindInvalidUTF8, wire.KindNonProtocol:
		return colorInvalid, true
	case wire.KindStderr:
		return colorDim, true
	}
	if ri.rec.Flags&(wire.FlagTruncated|wire.FlagPartial|wire.FlagBadVersion) != 0 {
		return colorInvalid, true
	}
	if severity == "error" || severity == "warning" {
		return severityColor(severity), true
	}
	return 0, false
}

func severityColor(sev string) tcell.Color {
	switch sev {
	case "error":
		return colorError
	case "warning":
		return colorWarn
	}
	return colorDim
}

func methodText(ri *rowInfo) string {
	if hop := protocol.HopLabel(ri.rec.Hop); hop != "" && ri.preview == "" {
		return methodOf(ri) + " " + hop
	}
	return methodOf(ri)
}

func methodOf(ri *rowInfo) string {
	r := &ri.rec
	switch {
	case ri.preview != "":
		return ri.preview
	case ri.update != "":
		return "update:" + ri.update
	case r.Kind == wire.KindResponse || r.Kind == wire.KindError:
		if r.Method == "" {
			return "(unpaired)"
		}
		if r.Kind == wire.KindError && r.ErrorCode != 0 {
			return fmt.Sprintf("%s [%d]", r.Method, r.ErrorCode)
		}
		return r.Method
	}
	return r.Method
}

// printable shows bytes on one line: control characters and invalid
// UTF-8 as escapes, so a preview never disturbs the terminal.
func printable(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&s, `\x%02x`, b[0])
		case r == '\n':
			s.WriteString(`\n`)
		case r == '\r':
			s.WriteString(`\r`)
		case r == '\t':
			s.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&s, `\u%04x`, r)
		default:
			s.WriteRune(r)
		}
		b = b[n:]
	}
	return s.String()
}
