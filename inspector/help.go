package inspector

import (
	"fmt"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// binding is one key and what it does, for help.
type binding struct{ keys, what string }

// bindings lists every key the inspector knows, grouped as help shows
// them. TestHelpListsEveryKey checks help against this list.
var bindings = []struct {
	group string
	keys  []binding
}{
	{"move", []binding{
		{"j ↓ / k ↑", "next / previous message"},
		{"g Home / G End", "first / last message (G resumes following)"},
		{"PgDn Ctrl-F / PgUp Ctrl-B", "page down / up"},
		{"Tab", "switch between the table and the detail pane"},
		{"Enter", "full-size detail (again: back); ⏸ row: held list"},
		{"Esc q", "back: detail → table → library; quits at the top"},
		{"Q Ctrl-C", "quit"},
	}},
	{"find", []binding{
		{"f", "filter: checked as typed, ? grammar, empty clears"},
		{"/ n N", "search, counted (3/17); next / previous match"},
		{":", "go to message number: :12 Enter"},
		{"m", "mark the message (and move on)"},
		{"M", "show marked messages only (again: all)"},
		{"p", "jump request ↔ response, show the latency"},
	}},
	{"show", []binding{
		{"t", "time column: absolute or Δ since the previous row"},
		{"b", "detail: raw wire bytes or pretty JSON"},
		{"x", "detail: expand folded JSON and base64 blobs"},
		{"F", "follow a live capture; ▼ N new when scrolled up"},
		{"c", "conversation by prompt turn; Enter jumps to it"},
		{"s", "statistics: per method, latency, bytes, rate"},
		{"l", "lint findings of the capture; Enter jumps"},
		{"w", "save the message's exact bytes to a file"},
		{"y", "copy the message to the clipboard (OSC 52)"},
		{"?", "this help"},
	}},
	{"intercept (a live capture; its proxy run with --allow-intercept)", []binding{
		{"i", "hold what a filter matches (again: stop)"},
		{"h", "the held messages, where these keys act:"},
		{"  f e x I", "forward / edit, forward / drop / release all"},
		{"S", "send a new message to the agent or the client"},
		{"r R", "resend the message as it was / edited first"},
	}},
	{"library", []binding{
		{"Enter", "open the capture, connection or session"},
		{"d", "delete the capture (asks first; not while live)"},
		{"g G", "first / last capture"},
		{"R", "reload now (the list also refreshes itself)"},
	}},
}

const pageModal = "modal"

// helpText renders bindings.
func helpText() string {
	var b strings.Builder
	b.WriteString("[::b]acpscope inspect — keys[::-]\n")
	for _, g := range bindings {
		fmt.Fprintf(&b, "\n[yellow]%s[-]\n", g.group)
		for _, k := range g.keys {
			fmt.Fprintf(&b, "  %-26s %s\n", tview.Escape(k.keys), k.what)
		}
	}
	b.WriteString("\n[gray]Esc, q or ? closes this help[-]")
	return b.String()
}

func (a *app) showHelp() { a.showText(" help ", helpText()) }

func (a *app) showGrammar() { a.showText(" filter grammar ", tview.Escape(capture.FilterGrammar)) }

// showText shows a scrollable text over the current page until Esc, q or
// ? closes it, then gives focus back.
func (a *app) showText(title, text string) {
	prev := a.tv.GetFocus()
	tv := tview.NewTextView().SetDynamicColors(true).SetText(text).SetScrollable(true)
	tv.SetBorder(true).SetTitle(title)
	tv.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyEnter ||
			ev.Key() == tcell.KeyRune && (ev.Rune() == 'q' || ev.Rune() == '?') {
			a.pages.RemovePage(pageModal)
			a.tv.SetFocus(prev)
			return nil
		}
		return ev
	})
	a.pages.AddPage(pageModal, tv, true, true)
	a.tv.SetFocus(tv)
}
