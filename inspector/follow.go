package inspector

import (
	"sync/atomic"

	"github.com/acpscope/acpscope/capture"
)

// liveSource is a capture still being written: *capture.Live, which tells
// when records arrive and when the proxy finishes.
type liveSource interface {
	capture.Source
	Updates() <-chan struct{}
	Err() error
}

// followLive is the follower goroutine of a live capture: it turns the
// feed's update signals into at most one pending refresh (the poster
// batches them per tick) and reports the end of the feed.
func (cv *captureView) followLive(j *job, live liveSource) {
	var pending atomic.Bool
	updates := live.Updates()
	for {
		select {
		case <-j.stopc:
			return
		case <-j.app.done:
			return
		case _, ok := <-updates:
			if !ok {
				j.post(func() { cv.liveEnded(live) })
				return
			}
			if pending.CompareAndSwap(false, true) {
				j.post(func() {
					pending.Store(false)
					cv.refreshLive()
				})
			}
		}
	}
}

// refreshLive shows records that arrived. Rows are only appended, so the
// selected row keeps its index; the scroll offset is kept too, so it does
// not move on screen, unless follow mode holds the view at the bottom.
func (cv *captureView) refreshLive() {
	if cv.filter != nil || cv.markedOnly {
		return // the filter worker appends its own matches
	}
	last := int(cv.src.Last())
	if last <= cv.rows.total {
		return
	}
	cv.appendTo(func() { cv.rows.grow(last) })
}

// appendRows adds a live filter's new matches.
func (cv *captureView) appendRows(seqs []uint64) {
	if cv.filter == nil || cv.markedOnly {
		return
	}
	cv.appendTo(func() { cv.rows.appendSeqs(seqs) })
}

func (cv *captureView) appendTo(grow func()) {
	atEnd := cv.selected() >= cv.rows.total-1
	offset, _ := cv.table.GetOffset()
	before := cv.rows.total
	grow()
	if cv.follow && atEnd {
		cv.toEnd()
	} else {
		cv.table.SetOffset(offset, 0)
		cv.newBelow += cv.rows.total - before
	}
	if cv.detailOf == 0 {
		cv.showDetail()
	}
}

// liveEnded marks the capture finished when its proxy exits. The view
// then reads the finished file itself: it holds everything the proxy
// committed, even records a cut feed did not deliver.
func (cv *captureView) liveEnded(live liveSource) {
	cv.refreshLive()
	cv.meta = live.Meta()
	cv.live = false
	cv.follow = false
	if err := live.Err(); err != nil {
		cv.message = "live feed ended: " + err.Error()
	} else {
		cv.message = "the proxy finished; the capture is complete"
	}
	if r, err := openReader(cv.path); err == nil {
		cv.swapSource(r)
		return
	}
	if cv.meta.End.IsZero() {
		// The feed ended without an end time and the file cannot be
		// read: the proxy died or still holds it. Do not claim live.
		cv.meta.End = cv.meta.Start
	}
}

// swapSource replaces the view's source, keeping the selection, the
// filter and the marks. The old source is closed once the workers that
// read it have stopped.
func (cv *captureView) swapSource(src capture.Source) {
	old := cv.src
	jobs := []*job{cv.filterJob, cv.searchJob, cv.detailJb}
	if cv.convo != nil {
		jobs = append(jobs, cv.convo.job)
	}
	if cv.stats != nil {
		jobs = append(jobs, cv.stats.job)
	}
	for _, j := range jobs {
		j.stop()
	}
	atEnd := cv.selected() >= cv.rows.total-1
	keep := cv.rows.seqAt(cv.selected())
	cv.src, cv.rows.src, cv.meta = src, src, src.Meta()
	cv.rows.findings = map[uint64]string{}
	cv.loadFindings()
	if cv.filter != nil {
		cv.applyFilter(cv.filter.Source())
	} else {
		cv.markedOnly = false
		cv.rows.setView(nil, true)
		if atEnd {
			cv.toEnd()
		} else {
			i, _ := cv.rows.indexOf(keep)
			cv.selectIndex(i)
		}
	}
	cv.showDetail()
	cv.a.start(func(*job) { // closer of the replaced source
		for _, j := range jobs {
			if j != nil {
				<-j.finished
			}
		}
		old.Close()
	})
}

// openReader opens the finished file behind a live view, when it has one.
func openReader(path string) (*capture.Reader, error) {
	if path == "" {
		return nil, capture.ErrNotFound
	}
	return capture.Open(path)
}
