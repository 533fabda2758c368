package inspector

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// This file is the findings page: the lint findings stored with the
// capture (by `acpscope lint`), worst first, each leading to its
// messages.

const pageFindings = "findings"

var severityRank = map[string]int{"info": 1, "warning": 2, "error": 3}

var severityIcon = map[string]string{"error": "✖", "warning": "▲", "info": "·"}

// showFindings opens the findings page over the capture view.
func (cv *captureView) showFindings() {
	if cv.findingsErr != nil {
		cv.message = "lint findings unreadable: " + cv.findingsErr.Error()
		return
	}
	if len(cv.findings) == 0 {
		cv.message = cv.noFindingsText()
		return
	}
	fs := append([]protocol.Finding(nil), cv.findings...)
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Severity != fs[j].Severity {
			return fs[i].Severity > fs[j].Severity
		}
		return first(fs[i].Seqs) < first(fs[j].Seqs)
	})
	table := tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)
	table.SetBorder(true).SetTitle(" " + findingsSummary(fs) + " — Enter jumps to the message, Esc back ")
	for c, h := range []string{" ", "rule", "messages", "what lint found"} {
		table.SetCell(0, c, tview.NewTableCell(h).SetSelectable(false).SetTextColor(tcell.ColorYellow).SetAttributes(tcell.AttrBold))
	}
	for i, f := range fs {
		color := severityColor(f.Severity.String())
		table.SetCell(i+1, 0, tview.NewTableCell(severityIcon[f.Severity.String()]).SetTextColor(color))
		table.SetCell(i+1, 1, tview.NewTableCell(esc(f.Rule)).SetTextColor(color).SetMaxWidth(28))
		table.SetCell(i+1, 2, tview.NewTableCell(seqList(f.Seqs, 2)).SetMaxWidth(12))
		table.SetCell(i+1, 3, tview.NewTableCell(esc(f.Message)).SetExpansion(1))
	}
	detail := tview.NewTextView().SetDynamicColors(true).SetWrap(true)
	detail.SetBorder(true).SetBorderColor(tcell.ColorGray)
	show := func(row int) {
		if row >= 1 && row <= len(fs) {
			detail.SetText(findingDetail(&fs[row-1]))
		}
	}
	table.SetSelectionChangedFunc(func(row, _ int) { show(row) })
	back := func() {
		cv.a.pages.RemovePage(pageFindings)
		cv.a.pages.SwitchToPage(pageCapture)
		cv.a.tv.SetFocus(cv.table)
	}
	table.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch {
		case ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyRune && (ev.Rune() == 'q' || ev.Rune() == 'l'):
			back()
		case ev.Key() == tcell.KeyEnter:
			row, _ := table.GetSelection()
			if row < 1 || row > len(fs) || len(fs[row-1].Seqs) == 0 {
				return nil
			}
			f := fs[row-1]
			back()
			cv.selectSeq(f.Seqs[0])
			cv.message = fmt.Sprintf("%s %s at #%d", f.Severity, f.Rule, f.Seqs[0])
			if len(f.Seqs) > 1 {
				cv.message += "; also " + seqList(f.Seqs[1:], 6)
			}
		case ev.Key() == tcell.KeyRune && ev.Rune() == 'j':
			return tcell.NewEventKey(tcell.KeyDown, 0, tcell.ModNone)
		case ev.Key() == tcell.KeyRune && ev.Rune() == 'k':
			return tcell.NewEventKey(tcell.KeyUp, 0, tcell.ModNone)
		default:
			return ev
		}
		return nil
	})
	table.Select(1, 0)
	show(1)
	page := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(table, 0, 3, true).
		AddItem(detail, 0, 2, false)
	cv.a.pages.AddAndSwitchToPage(pageFindings, page, true)
	cv.a.tv.SetFocus(table)
}

// noFindingsText says why there is nothing to list.
func (cv *captureView) noFindingsText() string {
	switch {
	case cv.live:
		return "no lint findings: lint runs on finished captures"
	case cv.findings == nil:
		name := "CAPTURE"
		if cv.path != "" {
			name = filepath.Base(cv.path)
		}
		return "never linted: `acpscope lint " + name + "` stores findings this view lists"
	}
	return "lint found nothing in this capture"
}

// findingsSummary counts findings by severity: "3 findings: 2 errors, 1 warning".
func findingsSummary(fs []protocol.Finding) string {
	n := map[string]int{}
	for _, f := range fs {
		n[f.Severity.String()]++
	}
	var parts []string
	for _, sev := range []string{"error", "warning", "info"} {
		if n[sev] > 0 {
			parts = append(parts, plural(n[sev], sev))
		}
	}
	return plural(len(fs), "finding") + ": " + strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// seqList writes up to most sequence numbers: "#5 #9 +3".
func seqList(seqs []uint64, most int) string {
	var parts []string
	for i, s := range seqs {
		if i == most {
			parts = append(parts, fmt.Sprintf("+%d", len(seqs)-most))
			break
		}
		parts = append(parts, fmt.Sprintf("#%d", s))
	}
	return strings.Join(parts, " ")
}

func findingDetail(f *protocol.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]%s %s[-]\n%s\n", colorName(f.Severity.String()), f.Severity, esc(f.Rule), esc(f.Message))
	if len(f.Seqs) > 0 {
		fmt.Fprintf(&b, "[gray]messages[-] %s\n", seqList(f.Seqs, 20))
	}
	if f.Ref != "" {
		fmt.Fprintf(&b, "[gray]see[-] %s\n", esc(f.Ref))
	}
	return b.String()
}
