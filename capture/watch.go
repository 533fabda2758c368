package capture

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Watchers are in-process subscribers of a running capture, fed like the
// live feed: each one's goroutine reads the committed records back from
// the file, so a watcher that is slow or busy never holds the writer's
// memory, its queue or the wire. Telemetry builds spans this way.

// Watcher receives a capture's records as they are committed.
type Watcher interface {
	// Record is called with each committed record in sequence order,
	// its body included. rec and its body are only valid during the call.
	Record(rec *Record)
	// Finish is called once after the last record. skipped counts the
	// records the watcher never got: it was still more than
	// WatchCloseWait behind when the writer closed, or a commit failed.
	// The notes it returns are stored in the capture's Meta.Notes before
	// the file closes. It must return promptly: Close waits for it.
	Finish(skipped uint64) map[string]string
}

// WatchCloseWait bounds how long Close lets a watcher that lags behind
// catch up before it is cut off.
var WatchCloseWait = 5 * time.Second

// commitSignal publishes the highest committed seq to watchers.
type commitSignal struct {
	last atomic.Uint64
	mu   sync.Mutex
	wake chan struct{} // closed and replaced on every advance
}

func (s *commitSignal) advance(last uint64) {
	if last > s.last.Load() {
		s.last.Store(last)
	}
	s.mu.Lock()
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	s.mu.Unlock()
}

func (s *commitSignal) waiter() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

// watch is one watcher's goroutine state.
type watch struct {
	w       *Writer
	wt      Watcher
	ending  chan struct{} // closed by Close: read to the end, then finish
	cut     atomic.Bool   // set by Close after WatchCloseWait: stop now
	done    chan struct{} // closed when Finish has returned
	got     uint64        // records delivered
	skipped uint64
	notes   map[string]string
}

// Watch hands every record of the capture, from the first on, to wt on
// a goroutine the Writer owns, and wt.Finish once the capture ends. Close
// waits for it (see WatchCloseWait). Watch after Close does nothing.
func (w *Writer) Watch(wt Watcher) {
	w.watchMu.Lock()
	defer w.watchMu.Unlock()
	if w.watchClosed {
		return
	}
	wa := &watch{w: w, wt: wt, ending: make(chan struct{}), done: make(chan struct{})}
	w.watches = append(w.watches, wa)
	go wa.run()
}

// run is the watcher's goroutine: it delivers committed records as they
// land, and ends once Close has committed the last of them.
func (wa *watch) run() {
	defer close(wa.done)
	next := uint64(1)
	for {
		wake := wa.w.commitSig.waiter()
		last := wa.w.commitSig.last.Load()
		if last >= next && !wa.cut.Load() {
			next = wa.deliver(next, last)
			continue
		}
		select {
		case <-wake:
			continue
		case <-wa.ending:
		}
		if last = wa.w.commitSig.last.Load(); last >= next && !wa.cut.Load() {
			next = wa.deliver(next, last)
			continue
		}
		wa.skipped = last - wa.got
		wa.notes = wa.wt.Finish(wa.skipped)
		return
	}
}

// deliver reads the records from next to last, one segment per read
// transaction, and hands each to the watcher outside the transaction. It
// returns the seq after the last one read.
func (wa *watch) deliver(next, last uint64) uint64 {
	for next <= last && !wa.cut.Load() {
		var recs []Record
		var bodies []byte
		var offsets []int64
		err := wa.w.db.View(func(tx *bolt.Tx) error {
			seg, err := findSegment(tx, next, true)
			if err != nil || seg == nil {
				return err
			}
			all, owned := segmentBodies(tx, seg.first)
			if int64(len(all)) == seg.offsets[len(seg.offsets)-1] {
				bodies = all
				if !owned {
					bodies = bytes.Clone(all)
				}
			}
			end := min(seg.first+uint64(len(seg.recs))-1, last)
			for seq := max(next, seg.first); seq <= end; seq++ {
				recs = append(recs, seg.record(seq))
				offsets = append(offsets, seg.offsets[seq-seg.first], seg.offsets[seq-seg.first+1])
			}
			next = end + 1
			return nil
		})
		if err != nil || len(recs) == 0 {
			// A hole left by a failed commit, or a read that failed:
			// the records are counted as skipped, never waited for.
			if err != nil {
				wa.w.opts.Warn(fmt.Sprintf("capture watcher could not read records from %d: %v", next, err))
			}
			return last + 1
		}
		for i := range recs {
			if wa.cut.Load() {
				break
			}
			if bodies != nil {
				recs[i].Body = bodies[offsets[2*i]:offsets[2*i+1]:offsets[2*i+1]]
			}
			wa.wt.Record(&recs[i])
			wa.got++
			// Let a pump woken meanwhile run first: on two cores a
			// watcher busy with a long group would otherwise hold a
			// processor the forwarding path is waiting for.
			runtime.Gosched()
		}
	}
	return next
}

// closeWatches lets every watcher read to the end (cutting off any still
// busy after WatchCloseWait), waits for their Finish and stores the notes
// they return. Close calls it once the committer has finished.
func (w *Writer) closeWatches() {
	w.watchMu.Lock()
	w.watchClosed = true
	watches := w.watches
	w.watchMu.Unlock()
	if len(watches) == 0 {
		return
	}
	for _, wa := range watches {
		close(wa.ending)
	}
	deadline := time.NewTimer(WatchCloseWait)
	defer deadline.Stop()
	for _, wa := range watches {
		select {
		case <-wa.done:
		case <-deadline.C:
			for _, c := range watches {
				c.cut.Store(true)
			}
			<-wa.done
		}
	}
	notes := map[string]string{}
	for _, wa := range watches {
		for k, v := range wa.notes {
			notes[k] = v
		}
	}
	if len(notes) > 0 {
		w.storeNotes(notes)
	}
}

// storeNotes adds notes to the metadata and stores it at once: the
// committer has finished, so this goroutine owns the file.
func (w *Writer) storeNotes(notes map[string]string) {
	w.metaMu.Lock()
	if w.meta.Notes == nil {
		w.meta.Notes = map[string]string{}
	}
	for k, v := range notes {
		w.meta.Notes[k] = v
	}
	meta := w.meta
	meta.Loss = w.loss()
	w.metaMu.Unlock()
	if w.failed != nil {
		return
	}
	err := w.db.Update(func(tx *bolt.Tx) error { return putMeta(tx.Bucket(bucketMeta), &meta) })
	if err != nil {
		w.opts.Warn(fmt.Sprintf("capture %s: storing notes: %v", w.path, err))
		return
	}
	if w.feed != nil {
		w.feed.metaGen.Add(1)
	}
}
