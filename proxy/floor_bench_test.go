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

// floorRecorder is the cheapest durable recording the HTTP benchmarks
// set beside capture: each message's bytes copied once into a batch, off
// the forwarding goroutine, and the batches written to a plain file and
// synced at capture's own commit bounds (CommitBytes or CommitEvery),
// with no validation, metadata, index or database. A proxy recording
// into it shows what writing the traffic down costs on this machine, and
// so how close to the minimal proxy any capture could come.
type floorRecorder struct {
	tap.Discard
	items   chan floorItem
	done    chan struct{}
	copies  sync.Pool    // of *[]byte, for the messages Frame copies
	dropped atomic.Int64 // messages that found no room in the queue
	kept    atomic.Int64 // messages taken into a batch
}

// floorItem is one message on its way to the file: lent (loan), copied
// into recycled memory (copied), or given.
type floorItem struct {
	b      []byte
	loan   capture.Loan
	copied *[]byte
}

// floorCommitBytes is capture's default group-commit size (4 MiB).
const floorCommitBytes = 4 << 20

// floorGrowBytes is how far ahead of its writes the floor's file grows.
const floorGrowBytes = 64 << 20

// newFloorRecorder writes into a file in b's temporary directory until b
// ends. Like capture, it drops what its queue (a few thousand messages)
// has no room for rather than hold up forwarding, and counts it.
func newFloorRecorder(b *testing.B) *floorRecorder {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor.bin"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	r := &floorRecorder{items: make(chan floorItem, 4096), done: make(chan struct{})}
	go r.write(b, f)
	b.Cleanup(func() {
		close(r.items)
		<-r.done
		f.Close()
	})
	return r
}

// write copies items into a batch, and writes and syncs the batch at the
// commit bounds. The file grows ahead of the writes, as bbolt's does, so
// a sync seldom has a new size to record.
func (r *floorRecorder) write(b *testing.B, f *os.File) {
	defer close(r.done)
	batch := make([]byte, 0, floorCommitBytes+64<<10)
	var off, size int64
	flush := func() {
		if len(batch) == 0 {
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
		if err := f.Sync(); err != nil {
			b.Error(err)
		}
		off += int64(len(batch))
		batch = batch[:0]
	}
	tick := time.NewTicker(capture.DefaultCommitEvery)
	defer tick.Stop()
	for idle := 0; ; {
		var it floorItem
		var open bool
		if idle < floorPollIdle {
			select {
			case it, open = <-r.items:
			case <-tick.C:
				flush()
				continue
			default:
				time.Sleep(floorPoll)
				idle++
				continue
			}
		} else {
			select {
			case it, open = <-r.items:
			case <-tick.C:
				flush()
				continue
			}
		}
		idle = 0
		if !open {
			flush()
			return
		}
		batch = append(batch, it.b...)
		r.release(it)
		r.kept.Add(1)
		if len(batch) >= floorCommitBytes {
			flush()
		}
	}
}

// While messages come, the floor polls its queue every floorPoll rather
// than park on it, and parks after floorPollIdle empty polls, as
// capture's builder does: a send to a parked receiver would make each
// forwarding goroutine wake the floor's thread, a syscall per message.
const (
	floorPoll     = 2 * time.Millisecond
	floorPollIdle = 50
)

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
	select {
	case r.items <- it:
	default:
		r.dropped.Add(1)
		r.release(it)
	}
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
