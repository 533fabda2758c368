package proxy

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
)

// floorRecorder is a recording that only writes the bytes down, set
// beside capture in the HTTP benchmarks: each message handed over as
// capture is handed it (lent, or copied into recycled memory), copied
// into a batch by a goroutine at capture's low priority, and the batches
// written to a plain file grown ahead of them and synced with fdatasync,
// as bbolt syncs, once they hold capture's DefaultCommitBytes or have
// waited DefaultCommitEvery. There is no validation, metadata, index or
// database, and capture's other bounds (records per commit, the queue's
// bytes, the spool) are not kept: it shows what writing the traffic down
// costs acpscope's proxy on this machine, not a bound capture must meet.
type floorRecorder struct {
	tap.Discard
	stage floorStage
	items chan floorItem
	// mu orders offers against stop: once stopped is set no item enters
	// the queue, so the writer, told to stop, empties it whole.
	mu      sync.RWMutex
	stopped bool
	stopCh  chan struct{}
	done    chan struct{}
	copies  sync.Pool    // of *[]byte, for the messages Frame copies
	dropped atomic.Int64 // messages that found no room in the queue
	written atomic.Int64 // messages written to the file
}

// floorItem is one message on its way to the file: lent (loan), copied
// into recycled memory (copied), or given.
type floorItem struct {
	b      []byte
	loan   capture.Loan
	copied *[]byte
}

// floorStage is how far a floorRecorder takes each message, so that
// BenchmarkHTTPFloorStages can say which step of writing the traffic
// down costs the proxy what.
type floorStage int

const (
	floorSync    floorStage = iota // written and synced: the floor itself
	floorLend                      // handed over and let go at once
	floorHandoff                   // queued to the writer, which lets it go unread
	floorCopy                      // copied into the writer's batch, never written
	floorWrite                     // written to the file, never synced
)

var floorStages = []struct {
	name  string
	stage floorStage
}{{"lend", floorLend}, {"handoff", floorHandoff}, {"copy", floorCopy}, {"write", floorWrite}, {"sync", floorSync}}

// floorGrowBytes is how far ahead of its writes the floor's file grows,
// so a sync seldom has a new size to record.
const floorGrowBytes = 64 << 20

// While messages come, the floor polls its queue every floorPoll rather
// than park on it, and parks after floorPollIdle empty polls, as
// capture's builder does: a send to a parked receiver would make each
// forwarding goroutine wake the floor's thread, a syscall per message.
const (
	floorPoll     = 2 * time.Millisecond
	floorPollIdle = 50
)

// newFloorRecorder takes messages as far as stage says, into a file in
// b's temporary directory, until stop. It drops what its queue (65536
// messages) has no room for rather than hold up forwarding, and counts
// it.
func newFloorRecorder(b *testing.B, stage floorStage) *floorRecorder {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor.bin"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	r := &floorRecorder{stage: stage, items: make(chan floorItem, 65536), stopCh: make(chan struct{}), done: make(chan struct{})}
	go r.write(b, f)
	return r
}

// stop lets no more messages in and waits for the writer to write and
// sync those queued. It may be called again.
func (r *floorRecorder) stop() {
	r.mu.Lock()
	already := r.stopped
	r.stopped = true
	r.mu.Unlock()
	if !already {
		close(r.stopCh)
	}
	<-r.done
}

// write copies items into a batch, and writes and syncs the batch once
// it holds capture's DefaultCommitBytes or its first item has waited
// DefaultCommitEvery, until stopped with the queue empty.
func (r *floorRecorder) write(b *testing.B, f *os.File) {
	defer close(r.done)
	defer f.Close()
	floorInBackground()
	batch := make([]byte, 0, capture.DefaultCommitBytes+64<<10)
	var off, size, inBatch int64
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	w := floorWaiter{r: r}
	flush := func() {
		timer.Stop()
		w.due = nil
		r.written.Add(inBatch) // by the time the metric is read, after stop
		inBatch = 0
		if len(batch) == 0 || r.stage == floorCopy { // nothing to write, or not to be written
			batch = batch[:0]
			return
		}
		if off+int64(len(batch)) > size {
			size = off + int64(len(batch)) + floorGrowBytes
			if err := f.Truncate(size); err != nil {
				b.Error(err)
			}
		}
		if _, err := f.WriteAt(batch, off); err != nil {
			b.Error(err)
		}
		if r.stage != floorWrite {
			if err := floorDatasync(f); err != nil {
				b.Error(err)
			}
		}
		off += int64(len(batch))
		batch = batch[:0]
	}
	for {
		it, due, done := w.next()
		switch {
		case done:
			flush()
			return
		case due:
			flush()
			continue
		}
		if inBatch == 0 {
			timer.Reset(capture.DefaultCommitEvery)
			w.due = timer.C
		}
		inBatch++
		if r.stage != floorHandoff {
			batch = append(batch, it.b...)
		}
		r.release(it)
		if len(batch) >= capture.DefaultCommitBytes {
			flush()
		}
	}
}

// floorWaiter is how the floor's writer waits for its next item.
type floorWaiter struct {
	r        *floorRecorder
	due      <-chan time.Time // fires when a sync is due; nil with none pending
	idle     int              // empty polls in a row
	stopping bool             // stop was seen: done once the queue is empty
}

// next returns the next item, or that a sync is due, or that the
// recorder is stopped and its queue empty. Every item offered before
// stop is queued by the time stopCh closes, so one more look at the
// queue after seeing it closed finds them all.
func (w *floorWaiter) next() (it floorItem, due, done bool) {
	for {
		select {
		case it = <-w.r.items:
			w.idle = 0
			return it, false, false
		default:
		}
		if w.stopping {
			return it, false, true
		}
		if w.idle < floorPollIdle { // polling: not a receiver a sender must wake
			select {
			case <-w.due:
				return it, true, false
			case <-w.r.stopCh:
				w.stopping = true
			default:
				time.Sleep(floorPoll)
				w.idle++
			}
			continue
		}
		select {
		case it = <-w.r.items:
			w.idle = 0
			return it, false, false
		case <-w.due:
			return it, true, false
		case <-w.r.stopCh:
			w.stopping = true
		}
	}
}

// release says the recorder reads it.b no more.
func (r *floorRecorder) release(it floorItem) {
	if it.loan != nil {
		it.loan.Return()
	}
	if it.copied != nil {
		r.copies.Put(it.copied)
	}
}

func (r *floorRecorder) enqueue(it floorItem) {
	if r.stage == floorLend {
		r.written.Add(1)
		r.release(it)
		return
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.stopped {
		select {
		case r.items <- it:
			return
		default:
		}
	}
	r.dropped.Add(1)
	r.release(it)
}

// Frame copies b into recycled memory, as capture does for a message it
// cannot borrow.
func (r *floorRecorder) Frame(_ uint32, _ wire.Dir, _ int64, b []byte, _ wire.Flags, _ *wire.Envelope) {
	c, _ := r.copies.Get().(*[]byte)
	if c == nil {
		c = new([]byte)
	}
	*c = append((*c)[:0], b...)
	r.enqueue(floorItem{b: *c, copied: c})
}

// TakeFrame keeps b.
func (r *floorRecorder) TakeFrame(_ uint32, _ wire.Dir, _ int64, b []byte, _ wire.Flags, _ *wire.Envelope) {
	r.enqueue(floorItem{b: b})
}

// LendFrame borrows b until it is in a batch.
func (r *floorRecorder) LendFrame(_ uint32, _ wire.Dir, _ int64, b []byte, _ wire.Flags, _ *wire.Envelope, loan capture.Loan) {
	r.enqueue(floorItem{b: b, loan: loan})
}

var _ tap.Borrower = (*floorRecorder)(nil)
