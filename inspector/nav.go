package inspector

import (
	"fmt"
	"sort"
	"strings"

	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
)

// tableKeys handles the message table's keys. Movement is done here rather
// than by tview so follow mode knows when the user leaves the bottom.
func (cv *captureView) tableKeys(ev *tcell.EventKey) *tcell.EventKey {
	cv.message = ""
	switch ev.Key() {
	case tcell.KeyDown:
		cv.move(1)
	case tcell.KeyUp:
		cv.move(-1)
	case tcell.KeyPgDn, tcell.KeyCtrlF:
		cv.move(cv.page())
	case tcell.KeyPgUp, tcell.KeyCtrlB:
		cv.move(-cv.page())
	case tcell.KeyHome:
		cv.selectIndex(0)
	case tcell.KeyEnd:
		cv.toEnd()
	case tcell.KeyEnter:
		if h := cv.rows.heldAt(cv.selected()); h != nil {
			cv.showHeldAt(h.ID)
			return nil
		}
		cv.setZoom(!cv.zoom)
		if cv.zoom {
			cv.a.tv.SetFocus(cv.detail)
		}
	case tcell.KeyTab, tcell.KeyBacktab:
		cv.a.tv.SetFocus(cv.detail)
	case tcell.KeyEscape:
		cv.back()
	case tcell.KeyRune:
		return cv.tableRune(ev)
	default:
		return ev
	}
	return nil
}

func (cv *captureView) tableRune(ev *tcell.EventKey) *tcell.EventKey {
	switch ev.Rune() {
	case 'j':
		cv.move(1)
	case 'k':
		cv.move(-1)
	case 'g':
		cv.selectIndex(0)
	case 'G':
		cv.toEnd()
	case 'q':
		cv.back()
	case 'f':
		cv.openBar("filter")
	case '/':
		cv.openBar("search")
	case 'n':
		cv.findNext(1)
	case 'N':
		cv.findNext(-1)
	case ':':
		cv.openBar("goto")
	case 'l':
		cv.showFindings()
	case 'F':
		cv.toggleFollow()
	case 'p':
		cv.jumpPeer()
	case 'm':
		cv.toggleMark()
	case 'M':
		cv.toggleMarkedOnly()
	case 't':
		cv.rows.delta = !cv.rows.delta
	case 'b':
		cv.raw = !cv.raw
		cv.showDetail()
	case 'i':
		cv.toggleIntercept()
	case 'h':
		cv.showHeld()
	case 'S':
		cv.sendNew()
	case 'r':
		cv.resend(false)
	case 'R':
		cv.resend(true)
	case 'x':
		cv.expand = !cv.expand
		cv.showDetail()
	case 'w':
		cv.askSave()
	case 'y':
		cv.copySelected()
	case 'c':
		cv.showConversation()
	case 's':
		cv.showStats()
	case '?':
		cv.a.showHelp()
	default:
		return ev
	}
	return nil
}

// detailKeys: the pane scrolls with tview's keys; these leave it.
func (cv *captureView) detailKeys(ev *tcell.EventKey) *tcell.EventKey {
	switch {
	case ev.Key() == tcell.KeyTab || ev.Key() == tcell.KeyBacktab:
		cv.a.tv.SetFocus(cv.table)
	case ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyEnter ||
		ev.Key() == tcell.KeyRune && ev.Rune() == 'q':
		cv.setZoom(false)
		cv.a.tv.SetFocus(cv.table)
	case ev.Key() == tcell.KeyRune && ev.Rune() != 'j' && ev.Rune() != 'k' && ev.Rune() != 'g' && ev.Rune() != 'G':
		// The table's other keys (p, r, x, w, y, ?) work here too.
		return cv.tableRune(ev)
	default:
		return ev
	}
	return nil
}

// back leaves the capture for the library, or quits when there is none to
// go back to.
func (cv *captureView) back() {
	switch {
	case cv.zoom:
		cv.setZoom(false)
	case cv.a.opts.Dir != "":
		cv.a.closeCapture()
		cv.a.showLibrary()
	default:
		cv.a.quit()
	}
}

func (cv *captureView) setZoom(on bool) {
	cv.zoom = on
	cv.body.ResizeItem(cv.table, 0, 3)
	if on {
		cv.body.ResizeItem(cv.table, 0, 0)
	}
}

func (cv *captureView) page() int {
	_, _, _, h := cv.table.GetInnerRect()
	if h > 2 {
		return h - 2
	}
	return 1
}

func (cv *captureView) move(n int) {
	cv.selectIndex(cv.selected() + n)
}

// toEnd selects the last row; in follow mode this also resumes following.
func (cv *captureView) toEnd() {
	cv.selectIndex(cv.rows.total - 1)
}

func (cv *captureView) toggleFollow() {
	cv.follow = !cv.follow
	if !cv.live {
		cv.message = "follow mode needs a live capture; this one is finished"
		cv.follow = false
		return
	}
	if cv.follow {
		cv.toEnd()
	}
}

// jumpPeer selects the request a response answers or the other way round.
func (cv *captureView) jumpPeer() {
	ri := cv.rows.row(cv.selected())
	if ri == nil {
		return
	}
	r := ri.rec
	if r.Peer == 0 {
		cv.message = fmt.Sprintf("#%d has no paired message", r.Seq)
		return
	}
	cv.selectSeq(r.Peer)
	lat := r.Latency
	if lat == 0 {
		if peer, err := cv.src.Record(r.Peer); err == nil {
			lat = peer.Latency
		}
	}
	what := "response"
	if r.Kind == wire.KindResponse || r.Kind == wire.KindError {
		what = "request"
	}
	cv.message = fmt.Sprintf("#%d → %s #%d, latency %s", r.Seq, what, r.Peer, human.Duration(lat))
}

func (cv *captureView) toggleMark() {
	seq := cv.rows.seqAt(cv.selected())
	if seq == 0 {
		return
	}
	if cv.rows.marks[seq] {
		delete(cv.rows.marks, seq)
	} else {
		cv.rows.marks[seq] = true
	}
	cv.move(1)
}

// toggleMarkedOnly shows only the marked messages, or the filter's view
// again.
func (cv *captureView) toggleMarkedOnly() {
	if strings.HasPrefix(cv.filtering, "searching") {
		cv.filtering = ""
	}
	cv.searchJob.stop()
	keep := cv.rows.seqAt(cv.selected())
	if cv.markedOnly {
		cv.markedOnly = false
		cv.restoreView(keep)
		return
	}
	if len(cv.rows.marks) == 0 {
		cv.message = "no marked messages: m marks the selected one"
		return
	}
	seqs := make([]uint64, 0, len(cv.rows.marks))
	for s := range cv.rows.marks {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	cv.markedOnly = true
	cv.rows.setView(seqs, false)
	i, _ := cv.rows.indexOf(keep)
	cv.selectIndex(i)
}
