package main

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// recorder is the floor's queue and the writer goroutine behind it.
type recorder struct {
	cfg    config
	file   *os.File
	queue  chan []byte
	queued atomic.Int64 // bytes in the queue

	// mu orders offers against stop: once stopped is set no chunk
	// enters the queue, so the writer, told to stop, empties it whole.
	mu      sync.RWMutex
	stopped bool
	stopCh  chan struct{}
	done    chan struct{}

	spareMu sync.Mutex
	spare   [][]byte // chunks written and free for reuse, last on top

	err error // the first write or sync that failed; the writer's until done
}

// queueChunks bounds the queue's length, as capture's QueueChunks does.
const queueChunks = 65536

// While chunks come, the writer polls the queue every pollEvery rather
// than park on it, and parks after pollIdle empty polls, as capture's
// builder does: a send to a parked receiver would make each pump wake
// the writer's thread, a syscall per chunk.
const (
	pollEvery = 2 * time.Millisecond
	pollIdle  = 50
)

// growBytes is how far ahead of its writes the file grows, so a sync
// seldom has a new size to record.
const growBytes = 64 << 20

func newRecorder(cfg config) (*recorder, error) {
	f, err := os.OpenFile(cfg.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	r := &recorder{cfg: cfg, file: f, queue: make(chan []byte, queueChunks), stopCh: make(chan struct{}), done: make(chan struct{})}
	go r.write()
	return r, nil
}

// offer copies b into the queue if it has room, and counts it lost
// otherwise; it never waits.
func (r *recorder) offer(b []byte, l *lineLoss) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := int64(len(b))
	if r.stopped || r.queued.Add(n) > r.cfg.queueBytes && !r.unreserve(n) {
		l.dropped(b)
		return
	}
	c := append(r.takeSpare(), b...)
	select {
	case r.queue <- c:
		l.kept(b)
	default:
		r.unreserve(n)
		r.putSpare(c)
		l.dropped(b)
	}
}

// unreserve takes n bytes back out of the queue's count; it reports
// false, so that offer reads as one condition.
func (r *recorder) unreserve(n int64) bool {
	r.queued.Add(-n)
	return false
}

func (r *recorder) takeSpare() []byte {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if k := len(r.spare); k > 0 {
		c := r.spare[k-1]
		r.spare = r.spare[:k-1]
		return c[:0]
	}
	return nil
}

// putSpare keeps c for reuse: no more of them than the queue can hold,
// so the floor takes fresh memory only while its queue first fills.
func (r *recorder) putSpare(c []byte) {
	r.spareMu.Lock()
	if len(r.spare) < queueChunks {
		r.spare = append(r.spare, c)
	}
	r.spareMu.Unlock()
}

// stop lets no more chunks in and waits for the writer to write and sync
// those queued.
func (r *recorder) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	close(r.stopCh)
	<-r.done
	r.file.Close()
}

// write is the writer goroutine: it writes chunks as they come and syncs
// once commitBytes wait or the first of them has waited commitEvery, as
// capture commits a group, until stopped with the queue empty.
func (r *recorder) write() {
	defer close(r.done)
	runInBackground()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	w := waiter{r: r}
	var off, size, pending int64
	sync := func() {
		if pending > 0 {
			r.failed(datasync(r.file))
			pending = 0
		}
		timer.Stop()
		w.due = nil
	}
	for {
		c, due, done := w.next()
		switch {
		case done:
			sync()
			return
		case due:
			sync()
			continue
		}
		n := int64(len(c))
		if off+n > size {
			size = off + n + growBytes
			r.failed(r.file.Truncate(size))
		}
		_, err := r.file.WriteAt(c, off)
		r.failed(err)
		if pending == 0 {
			timer.Reset(r.cfg.commitEvery)
			w.due = timer.C
		}
		off += n
		pending += n
		r.queued.Add(-n)
		r.putSpare(c)
		if pending >= r.cfg.commitBytes {
			sync()
		}
	}
}

// failed keeps the first error.
func (r *recorder) failed(err error) {
	if err != nil && r.err == nil {
		r.err = err
	}
}

// waiter is how the writer waits for its next chunk.
type waiter struct {
	r        *recorder
	due      <-chan time.Time // fires when a sync is due; nil with none pending
	idle     int              // empty polls in a row
	stopping bool             // stop was seen: done once the queue is empty
}

// next returns the next chunk, or that a sync is due, or that the
// recorder is stopped and its queue empty. Every chunk offered before
// stop is in the queue by the time stopCh closes, so one more look at
// the queue after seeing it closed finds them all.
func (w *waiter) next() (c []byte, due, done bool) {
	for {
		select {
		case c = <-w.r.queue:
			w.idle = 0
			return c, false, false
		default:
		}
		if w.stopping {
			return nil, false, true
		}
		if w.idle < pollIdle { // polling: not a receiver a pump must wake
			select {
			case <-w.due:
				return nil, true, false
			case <-w.r.stopCh:
				w.stopping = true
			default:
				time.Sleep(pollEvery)
				w.idle++
			}
			continue
		}
		select {
		case c = <-w.r.queue:
			w.idle = 0
			return c, false, false
		case <-w.due:
			return nil, true, false
		case <-w.r.stopCh:
			w.stopping = true
		}
	}
}

// writeLoss writes PATH.loss: both directions' lost lines and bytes, and
// the first failure to write or sync, if any.
func (r *recorder) writeLoss(up, down *lineLoss) error {
	s := fmt.Sprintf("%d %d\n", up.lines.Load()+down.lines.Load(), up.bytes.Load()+down.bytes.Load())
	if r.err != nil {
		s += "error: " + r.err.Error() + "\n"
	}
	return os.WriteFile(r.cfg.path+".loss", []byte(s), 0o600)
}
