package inspector

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpscope/acpscope/internal/human"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// askSave asks where to save the selected message's exact bytes.
func (cv *captureView) askSave() {
	seq := cv.rows.seqAt(cv.selected())
	if seq == 0 {
		return
	}
	prev := cv.a.tv.GetFocus()
	in := tview.NewInputField().SetLabel("save to: ").SetText(fmt.Sprintf("acpscope-msg-%d.json", seq))
	in.SetBorder(true).SetTitle(" w: save message ")
	closeIt := func() {
		cv.a.pages.RemovePage(pageModal)
		cv.a.tv.SetFocus(prev)
	}
	in.SetDoneFunc(func(key tcell.Key) {
		if key == tcell.KeyEnter {
			if err := cv.saveMessage(seq, in.GetText()); err != nil {
				cv.message = err.Error()
			} else {
				abs, _ := filepath.Abs(in.GetText())
				cv.message = fmt.Sprintf("saved #%d to %s", seq, abs)
			}
		}
		closeIt()
	})
	cv.a.pages.AddPage(pageModal, centered(in, 60, 3), true, true)
	cv.a.tv.SetFocus(in)
}

// saveMessage writes the exact wire bytes plus a newline, as the line was
// framed, with the capture's permissions (messages may hold secrets).
func (cv *captureView) saveMessage(seq uint64, path string) error {
	body, err := cv.src.Body(seq)
	if err != nil {
		return fmt.Errorf("reading message #%d: %w", seq, err)
	}
	if err := os.WriteFile(path, append(body, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving message #%d: %w", seq, err)
	}
	return nil
}

// copySelected puts the selected message on the clipboard through the
// terminal (OSC 52), which works over ssh too.
func (cv *captureView) copySelected() {
	seq := cv.rows.seqAt(cv.selected())
	if seq == 0 {
		return
	}
	body, err := cv.src.Body(seq)
	if err != nil {
		cv.message = fmt.Sprintf("reading message #%d: %v", seq, err)
		return
	}
	if cv.a.screen == nil {
		return
	}
	cv.a.screen.SetClipboard(body)
	cv.message = fmt.Sprintf("copied #%d (%s) to the clipboard with OSC 52; some terminals need it enabled", seq, human.Size(int64(len(body))))
}

// centered places p in the middle of the screen at the given size.
func centered(p tview.Primitive, w, h int) tview.Primitive {
	return tview.NewFlex().
		AddItem(nil, 0, 1, false).
		AddItem(tview.NewFlex().SetDirection(tview.FlexRow).
			AddItem(nil, 0, 1, false).
			AddItem(p, h, 0, true).
			AddItem(nil, 0, 1, false), w, 0, true).
		AddItem(nil, 0, 1, false)
}
