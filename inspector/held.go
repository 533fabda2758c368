package inspector

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

const (
	pageHeld = "held"
	pageEdit = "edit"
)

// heldPage lists the messages the proxy holds for this inspector, with
// the one selected shown whole; f forwards it, e edits then forwards, x
// drops, I releases all.
type heldPage struct {
	cv     *captureView
	table  *tview.Table
	detail *tview.TextView
	root   *tview.Flex
}

// showHeldAt opens the held messages at the one numbered id.
func (cv *captureView) showHeldAt(id uint64) {
	cv.showHeld()
	if p := cv.a.heldPage; p != nil && cv.ctl != nil {
		for i, h := range cv.ctl.held {
			if h.ID == id {
				p.table.Select(i+1, 0)
			}
		}
	}
}

// showHeld opens the held messages.
func (cv *captureView) showHeld() {
	if cv.ctl == nil || cv.ctl.filter == "" && len(cv.ctl.held) == 0 {
		cv.message = "nothing is held: i intercepts what a filter matches (the proxy needs --allow-intercept)"
		return
	}
	p := &heldPage{cv: cv}
	p.table = tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)
	p.table.SetBorder(true)
	p.detail = tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetScrollable(true)
	p.detail.SetBorder(true).SetBorderColor(tcell.ColorGray)
	p.table.SetSelectionChangedFunc(func(int, int) { p.showDetail() })
	p.table.SetInputCapture(p.keys)
	p.root = tview.NewFlex().SetDirection(tview.FlexRow).AddItem(p.table, 0, 1, true).AddItem(p.detail, 0, 2, false)
	cv.a.heldPage = p
	cv.a.heldOpen.Store(true)
	cv.a.pages.AddAndSwitchToPage(pageHeld, p.root, true)
	cv.a.tv.SetFocus(p.table)
	p.refresh()
}

// refresh redraws the list from what the proxy said is held.
func (p *heldPage) refresh() {
	ctl := p.cv.ctl
	var held []fault.HeldView
	filter := ""
	if ctl != nil {
		held, filter = ctl.held, ctl.filter
	}
	row, _ := p.table.GetSelection()
	p.table.Clear()
	title := fmt.Sprintf(" %d held · intercepting %s ", len(held), orNone(filter))
	p.table.SetTitle(esc(title))
	for c, h := range []string{"#", "dir", "message", "size", "held for"} {
		p.table.SetCell(0, c, tview.NewTableCell(h).SetSelectable(false).SetTextColor(tcell.ColorYellow).SetAttributes(tcell.AttrBold))
	}
	now := time.Now().UnixNano()
	for i := range held {
		h := &held[i]
		p.table.SetCell(i+1, 0, tview.NewTableCell(fmt.Sprint(h.ID)).SetTextColor(tcell.ColorOrange))
		p.table.SetCell(i+1, 1, tview.NewTableCell(h.Dir))
		p.table.SetCell(i+1, 2, tview.NewTableCell(esc(heldSummary(h))).SetExpansion(1))
		p.table.SetCell(i+1, 3, tview.NewTableCell(human.Size(int64(len(h.Message)))))
		p.table.SetCell(i+1, 4, tview.NewTableCell(human.Duration(time.Duration(now-h.Arrived).Round(time.Second))))
	}
	p.table.Select(min(max(row, 1), max(len(held), 1)), 0)
	p.showDetail()
}

func orNone(filter string) string {
	if filter == "" {
		return "nothing (off)"
	}
	return filter
}

// selectedHeld is the held message under the cursor, nil when none.
func (p *heldPage) selectedHeld() *fault.HeldView {
	row, _ := p.table.GetSelection()
	if p.cv.ctl == nil || row < 1 || row > len(p.cv.ctl.held) {
		return nil
	}
	h := p.cv.ctl.held[row-1]
	return &h
}

func (p *heldPage) showDetail() {
	h := p.selectedHeld()
	if h == nil {
		p.detail.SetTitle(" nothing held — Esc back ")
		p.detail.SetText("[gray]messages the filter matches appear here as they arrive[-]")
		return
	}
	p.detail.SetTitle(fmt.Sprintf(" held #%d %s — f forward  e edit  x drop  I all  Esc back ", h.ID, esc(heldSummary(h))))
	p.detail.SetText(esc(pretty(h.Message)))
}

func (p *heldPage) keys(ev *tcell.EventKey) *tcell.EventKey {
	cv := p.cv
	switch {
	case ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyRune && ev.Rune() == 'q':
		p.close()
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'f':
		p.release(fault.VerdictForward, nil)
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'e':
		if h := p.selectedHeld(); h != nil {
			id := h.ID
			cv.a.editText(fmt.Sprintf("edit held #%d", id), "# forwarded as edited here when saved; an empty message cancels\n"+pretty(h.Message), func(text string) error {
				_, msg, ok, err := parseComposed(text)
				if err != nil || !ok {
					return err
				}
				p.releaseID(id, fault.VerdictEdit, msg)
				return nil
			})
		}
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'x':
		if h := p.selectedHeld(); h != nil {
			id := h.ID
			cv.a.confirm(fmt.Sprintf("Drop held #%d %s? It never reaches the other side.", id, heldSummary(h)), func() {
				p.releaseID(id, fault.VerdictDrop, nil)
			})
		}
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'I':
		cv.controlDo(func(c *fault.Client) (string, error) {
			n, err := c.ReleaseAll()
			return fmt.Sprintf("released %d unchanged", n), err
		}, nil)
	default:
		return ev
	}
	return nil
}

func (p *heldPage) release(verdict string, msg []byte) {
	if h := p.selectedHeld(); h != nil {
		p.releaseID(h.ID, verdict, msg)
	}
}

func (p *heldPage) releaseID(id uint64, verdict string, msg []byte) {
	p.cv.controlDo(func(c *fault.Client) (string, error) {
		return fmt.Sprintf("held #%d: %s", id, verdict), c.Release(id, verdict, msg)
	}, nil)
}

func (p *heldPage) close() {
	a := p.cv.a
	a.heldPage = nil
	a.heldOpen.Store(false)
	a.pages.RemovePage(pageHeld)
	a.pages.SwitchToPage(pageCapture)
	a.tv.SetFocus(p.cv.table)
}

// editText lets the user edit text, in $VISUAL or $EDITOR when set (the
// screen is suspended meanwhile), else in an editor inside the
// inspector; submit receives the result and may refuse it with an
// error, which keeps the text open for another try.
func (a *app) editText(title, text string, submit func(string) error) {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		a.editInline(title, text, submit)
		return
	}
	edited, err := a.runEditor(editor, text)
	if err != nil {
		a.setMessage(err.Error())
		a.editInline(title, text, submit) // nothing typed is lost
		return
	}
	if err := submit(edited); err != nil {
		a.editInline(title+": "+err.Error(), edited, submit)
	}
}

// runEditor runs editor on a private copy of text and returns what it
// saved. The copy lives in a directory only the user can open, and is
// removed after.
func (a *app) runEditor(editor, text string) (string, error) {
	dir, err := os.MkdirTemp("", "acpscope-edit-")
	if err != nil {
		return "", fmt.Errorf("editing: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "message.json")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("editing: %w", err)
	}
	var runErr error
	a.tv.Suspend(func() {
		// As git does: $EDITOR may hold arguments, so a shell runs it.
		cmd := exec.Command("sh", "-c", editor+` "$1"`, "sh", file)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		runErr = cmd.Run()
	})
	if runErr != nil {
		return "", fmt.Errorf("the editor (%s) failed: %v; nothing was sent", editor, runErr)
	}
	b, err := os.ReadFile(file)
	return string(b), err
}

// editInline edits text in a text area over the current page: Ctrl-S
// submits, Esc cancels.
func (a *app) editInline(title, text string, submit func(string) error) {
	prev := a.tv.GetFocus()
	area := tview.NewTextArea().SetText(text, false)
	area.SetBorder(true).SetTitle(esc(" " + title + " — Ctrl-S send, Esc cancel "))
	closeEditor := func() {
		a.pages.RemovePage(pageEdit)
		a.tv.SetFocus(prev)
	}
	area.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyEscape:
			closeEditor()
			a.setMessage("nothing sent")
		case tcell.KeyCtrlS:
			if err := submit(area.GetText()); err != nil {
				area.SetTitle(esc(" " + title + ": " + err.Error() + " — Ctrl-S send, Esc cancel "))
				return nil
			}
			closeEditor()
		default:
			return ev
		}
		return nil
	})
	a.pages.AddPage(pageEdit, area, true, true)
	a.tv.SetFocus(area)
}

// confirm asks a yes-or-no question; yes runs on the UI goroutine.
func (a *app) confirm(question string, yes func()) {
	prev := a.tv.GetFocus()
	modal := tview.NewModal().SetText(question).AddButtons([]string{"Cancel", "Yes"}).
		SetDoneFunc(func(_ int, label string) {
			a.pages.RemovePage(pageModal)
			a.tv.SetFocus(prev)
			if label == "Yes" {
				yes()
			}
		})
	a.pages.AddPage(pageModal, modal, true, true)
	a.tv.SetFocus(modal)
}

// setMessage shows msg in the capture view's status line.
func (a *app) setMessage(msg string) {
	if a.cv != nil {
		a.cv.message = msg
	}
}
