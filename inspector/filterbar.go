package inspector

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/gdamore/tcell/v2"
)

const (
	filterLabel   = "filter: "
	searchLabel   = "/"
	gotoLabel     = "go to #"
	holdLabel     = "intercept: "
	progressEvery = 100 * time.Millisecond
	// pollLive is how often a filter over a live capture looks for new
	// records once it has caught up.
	pollLive = 100 * time.Millisecond
)

var (
	barOK  = tcell.ColorBlack
	barBad = tcell.ColorMaroon
)

// openBar shows the bar in the status bar's place, to edit the filter,
// type a search or a message number.
func (cv *captureView) openBar(mode string) {
	cv.barMode = mode
	switch mode {
	case "filter":
		cv.bar.SetLabel(filterLabel)
		cv.bar.SetText(cv.filter.Source())
	case "search":
		cv.bar.SetLabel(searchLabel)
		cv.bar.SetText(cv.search.Source())
	case "goto":
		cv.bar.SetLabel(gotoLabel)
		cv.bar.SetText("")
	case "intercept":
		cv.bar.SetLabel(holdLabel)
		cv.bar.SetText(cv.filter.Source())
	}
	cv.root.ResizeItem(cv.bar, 1, 0)
	cv.root.ResizeItem(cv.state, 0, 0)
	cv.a.tv.SetFocus(cv.bar)
}

// barChanged checks the expression as it is typed.
func (cv *captureView) barChanged(text string) {
	switch cv.barMode {
	case "":
		return
	case "goto":
		cv.message = ""
		if _, err := parseSeq(text); err != nil && text != "" {
			cv.message = err.Error()
		}
		return
	}
	_, err := capture.ParseFilter(text)
	var fe *capture.FilterError
	if errors.As(err, &fe) {
		cv.bar.SetFieldBackgroundColor(barBad)
		label := len(filterLabel)
		switch cv.barMode {
		case "search":
			label = len(searchLabel)
		case "intercept":
			label = len(holdLabel)
		}
		cv.message = fmt.Sprintf("%s^ at byte %d: %s", strings.Repeat(" ", label+fe.Pos), fe.Pos, fe.Msg)
		return
	}
	cv.bar.SetFieldBackgroundColor(barOK)
	cv.message = ""
}

// barKeys: ? shows the grammar instead of typing a question mark.
func (cv *captureView) barKeys(ev *tcell.EventKey) *tcell.EventKey {
	if ev.Key() == tcell.KeyRune && ev.Rune() == '?' && cv.barMode != "goto" {
		cv.a.showGrammar()
		return nil
	}
	return ev
}

func (cv *captureView) barDone(key tcell.Key) {
	mode := cv.barMode
	text := cv.bar.GetText()
	switch key {
	case tcell.KeyEnter:
		if mode == "goto" {
			cv.closeBar()
			cv.gotoSeq(text)
			return
		}
		if _, err := capture.ParseFilter(text); err != nil {
			return // stay in the bar; the error is shown
		}
		cv.closeBar()
		switch mode {
		case "filter":
			cv.applyFilter(text)
		case "intercept":
			cv.startIntercept(text)
		default:
			cv.startSearch(text)
		}
	case tcell.KeyEscape:
		cv.closeBar()
		cv.message = ""
	}
}

func (cv *captureView) closeBar() {
	cv.barMode = ""
	cv.bar.SetFieldBackgroundColor(barOK)
	cv.bar.SetLabel(filterLabel)
	cv.bar.SetText(cv.filter.Source())
	cv.root.ResizeItem(cv.bar, 0, 0)
	cv.root.ResizeItem(cv.state, 1, 0)
	cv.a.tv.SetFocus(cv.table)
}

// applyFilter runs a filter over every record on a worker, showing
// progress, then shows the matches. On a live capture the worker keeps
// filtering new records as they arrive.
func (cv *captureView) applyFilter(text string) {
	f, err := capture.ParseFilter(text)
	if err != nil {
		cv.message = err.Error()
		return
	}
	cv.filterJob.stop()
	cv.searchJob.stop() // its row numbers belong to the old view
	if f.Empty() {
		cv.clearFilter()
		return
	}
	cv.filter = f
	cv.markedOnly = false
	cv.filtering = "filtering… 0%"
	keep := cv.rows.seqAt(cv.selected())
	src, live := cv.src, cv.live
	cv.filterJob = cv.a.start(func(j *job) { // filter worker
		seqs, next, ok := filterRange(j, src, f, 1, func(done, total uint64) {
			j.post(func() {
				cv.filtering = fmt.Sprintf("filtering… %d%% (%d of %d)", done*100/max(total, 1), done, total)
			})
		})
		if !ok {
			return
		}
		j.post(func() {
			cv.filtering = ""
			cv.rows.setView(seqs, false)
			i, _ := cv.rows.indexOf(keep)
			if cv.follow && live {
				i = cv.rows.total - 1
			}
			cv.selectIndex(i)
			cv.showDetail()
		})
		if live {
			cv.filterLive(j, f, next)
		}
	})
}

// filterLive appends the matches among records that arrive later.
func (cv *captureView) filterLive(j *job, f *capture.Filter, next uint64) {
	tick := time.NewTicker(pollLive)
	defer tick.Stop()
	for {
		select {
		case <-j.stopc:
			return
		case <-j.app.done:
			return
		case <-tick.C:
		}
		if cv.src.Last() < next {
			continue
		}
		seqs, n, ok := filterRange(j, cv.src, f, next, nil)
		if !ok {
			return
		}
		next = n
		if len(seqs) > 0 {
			j.post(func() { cv.appendRows(seqs) })
		}
	}
}

// filterRange scans records from seq from to the current end and returns
// the matching sequences and the next sequence to scan. ok is false when
// the job was stopped.
func filterRange(j *job, src capture.Source, f *capture.Filter, from uint64, progress func(done, total uint64)) (seqs []uint64, next uint64, ok bool) {
	last := src.Last()
	if last < from {
		return nil, from, true
	}
	seqs, ok, err := matchRange(j, src, f, from, last, progress)
	if !ok {
		return nil, from, false
	}
	if err != nil {
		j.post(func() { j.app.cv.message = "filter stopped: " + err.Error() })
	}
	return seqs, last + 1, true
}

// clearFilter shows every record again.
func (cv *captureView) clearFilter() {
	cv.filterJob.stop()
	cv.searchJob.stop()
	cv.filter = nil
	cv.filtering = ""
	cv.markedOnly = false
	cv.bar.SetText("")
	keep := cv.rows.seqAt(cv.selected())
	cv.rows.setView(nil, true)
	i, _ := cv.rows.indexOf(keep)
	cv.selectIndex(i)
}

// restoreView leaves the marked-only view for the filter's (or all).
func (cv *captureView) restoreView(keep uint64) {
	if cv.filter == nil {
		cv.rows.setView(nil, true)
		i, _ := cv.rows.indexOf(keep)
		cv.selectIndex(i)
		return
	}
	cv.applyFilter(cv.filter.Source())
}
