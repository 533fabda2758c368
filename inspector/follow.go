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
	grow()
	if cv.follow && atEnd {
		cv.toEnd()
	} else {
		cv.table.SetOffset(offset, 0)
	}
	if cv.detailOf == 0 {
		cv.showDetail()
	}
}

// liveEnded marks the capture finished when its proxy exits, reading the
// final metadata from the file.
func (cv *captureView) liveEnded(live liveSource) {
	cv.refreshLive()
	cv.meta = live.Meta()
	if r, err := openReader(cv.path); err == nil {
		cv.meta = r.Meta()
		r.Close()
	}
	if cv.meta.End.IsZero() {
		// The feed ended without an end time: the proxy died or the
		// feed was cut. Say so rather than claim it is still live.
		cv.meta.End = cv.meta.Start
	}
	cv.live = false
	cv.follow = false
	if err := live.Err(); err != nil {
		cv.message = "live feed ended: " + err.Error()
	} else {
		cv.message = "the proxy finished; the capture is complete"
	}
}

// openReader opens the finished file behind a live view, when it has one.
func openReader(path string) (*capture.Reader, error) {
	if path == "" {
		return nil, capture.ErrNotFound
	}
	return capture.Open(path)
}
