package capture

import (
	"errors"
	"sync"
)

// The stages of an export (Exporter.Each) pass records along channels;
// a pipe bounds the bytes of the bodies between them and stops them all
// when the last stage fails.

// pipeBytes bounds the body bytes between the stages of an export.
// Records go from stage to stage in batches of up to batchRecords records
// or batchBytes, pipeBatches of them on each channel: a hand-off per
// record cost more than the work of the stages.
const (
	pipeBytes    = 2 << 20
	pipeBatches  = 4
	batchRecords = 512
	batchBytes   = 256 << 10
)

// errPipeStopped ends a stage whose pipe was stopped.
var errPipeStopped = errors.New("export stopped")

// batch is records on their way, with the body bytes reserved for them.
type batch struct {
	recs []*Record
	size int64
}

// pipe is the shared state of one export's stages.
type pipe struct {
	mu      sync.Mutex
	room    *sync.Cond // signalled when bytes are released or the pipe stops
	used    int64
	limit   int64
	stopped chan struct{}
	once    sync.Once
}

func newPipe(limit int64) *pipe {
	p := &pipe{limit: limit, stopped: make(chan struct{})}
	p.room = sync.NewCond(&p.mu)
	return p
}

// reserve waits until n more body bytes fit (any n fits an empty pipe)
// and takes them; false when the pipe was stopped.
func (p *pipe) reserve(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.used > 0 && p.used+n > p.limit && !p.isStopped() {
		p.room.Wait()
	}
	if p.isStopped() {
		return false
	}
	p.used += n
	return true
}

// fits reports whether n more bytes would fit now.
func (p *pipe) fits(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used == 0 || p.used+n <= p.limit
}

// release gives back n bytes once their record has left the last stage.
func (p *pipe) release(n int64) {
	p.mu.Lock()
	p.used -= n
	p.mu.Unlock()
	p.room.Broadcast()
}

// send passes b to the next stage; false when the pipe was stopped.
func (p *pipe) send(out chan<- batch, b batch) bool {
	select {
	case out <- b:
		return true
	case <-p.stopped:
		return false
	}
}

// stop ends every stage: waits and sends return at once.
func (p *pipe) stop() {
	p.once.Do(func() {
		// Under the lock, so that a reserve between its check and its
		// Wait cannot miss the wake-up.
		p.mu.Lock()
		defer p.mu.Unlock()
		close(p.stopped)
		p.room.Broadcast()
	})
}

func (p *pipe) isStopped() bool {
	select {
	case <-p.stopped:
		return true
	default:
		return false
	}
}

// unbounded reserves nothing: for a reader with a single stage.
func unbounded(int64) bool { return true }
