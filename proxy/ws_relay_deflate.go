package proxy

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acpscope/acpscope/internal/wsframe"
	"github.com/acpscope/acpscope/wire"
)

// A socket whose ends agreed on permessage-deflate has its records made
// by one goroutine of its own, in the order its messages and closes
// completed on the wire. Decoding a compressed message costs CPU in
// proportion to what it decodes to, up to the message limit (0.6 ms for
// a 1.1 MB update in BenchmarkInflate, so about 0.15 s at the default
// 256 MiB), which the forwarding goroutines must not spend. What waits is bounded; past
// the bound a message is recorded empty and flagged truncated, and the
// later compressed messages of its direction are recorded as sent,
// since they may refer back to the one not kept.

// deflateRecorder records one compressed socket.
type deflateRecorder struct {
	r          *byteRelay
	jobs       chan recordJob
	maxHeld    int64               // bytes that may wait to be recorded
	held       atomic.Int64        // bytes waiting
	inflaters  [3]wsframe.Inflater // by wire.Dir
	lost       [3]bool             // a compressed message was not kept: later ones cannot be decoded
	warned     bool                // said that a message could not be decoded
	saidBehind bool                // said that a message was not kept
	done       chan struct{}
	// waiting holds, in order, what found the queue full, until the
	// queue takes it: a close as it is, for it says how the socket ended
	// and nothing else would; messages as marks, recorded empty and
	// truncated in their place, so what waits holds no bodies.
	waitMu  sync.Mutex
	waiting []recordJob
	behind  atomic.Bool // waiting holds any: a submit joins it there
}

// recordJob is one record waiting: a message (data, owned by the job) or,
// with env set, a close.
type recordJob struct {
	dir        wire.Dir
	t          int64
	data       []byte
	flags      wire.Flags
	compressed bool
	dropped    bool           // over the bound: recorded empty and truncated
	missed     int64          // a mark for this many messages that found the queue full
	env        *wire.Envelope // a close's envelope; nil for a message
}

// The bounds of what waits to be recorded on one socket.
const (
	deflateJobs = 4096
	deflateHeld = 64 << 20
)

// agreedDeflate reports whether an upgrade's answer took permessage-deflate.
func agreedDeflate(h http.Header) bool {
	for _, v := range h.Values("Sec-Websocket-Extensions") {
		for _, ext := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(ext, ";")
			if strings.TrimSpace(name) == "permessage-deflate" {
				return true
			}
		}
	}
	return false
}

// newDeflateRecorder starts the socket's recording goroutine; close
// stops it once everything submitted is recorded.
func newDeflateRecorder(r *byteRelay) *deflateRecorder {
	d := &deflateRecorder{r: r, jobs: make(chan recordJob, deflateJobs), maxHeld: deflateHeld, done: make(chan struct{})}
	go d.run() // the socket's recorder: ends when close closes jobs
	return d
}

// submit hands a record over without ever waiting. A message past the
// bytes that may wait is queued as dropped; a record that finds the
// queue full, or others waiting before it, waits in order.
func (d *deflateRecorder) submit(j recordJob) {
	if j.env == nil && d.held.Load()+int64(len(j.data)) > d.maxHeld {
		j.data, j.dropped = nil, true
	}
	if !d.behind.Load() && d.queue(j) {
		return
	}
	d.waitMu.Lock()
	defer d.waitMu.Unlock()
	if d.catchUp() && d.queue(j) {
		return
	}
	d.wait(j)
}

// queue hands j over if the queue has room, counting its bytes.
func (d *deflateRecorder) queue(j recordJob) bool {
	n := int64(len(j.data))
	d.held.Add(n)
	select {
	case d.jobs <- j:
		return true
	default:
		d.held.Add(-n)
		return false
	}
}

// wait puts j at the end of what waits, a message as a mark. Marks
// since the last close join by direction, so what waits grows with the
// closes, a few per socket, never with the messages: marked one by one
// as the two directions took turns, a flood while the recorder was
// held up by messages that decode to megabytes would have grown it for
// as long as that lasted. waitMu is held.
func (d *deflateRecorder) wait(j recordJob) {
	if j.env == nil {
		for k := len(d.waiting) - 1; k >= 0 && d.waiting[k].env == nil; k-- {
			if m := &d.waiting[k]; m.dir == j.dir {
				m.missed++
				m.compressed = m.compressed || j.compressed
				return
			}
		}
		j = recordJob{dir: j.dir, t: j.t, missed: 1, compressed: j.compressed}
	}
	d.waiting = append(d.waiting, j)
	d.behind.Store(true)
}

// catchUp queues what waits, in order, while the queue has room, and
// reports whether nothing waits any more. waitMu is held.
func (d *deflateRecorder) catchUp() bool {
	for len(d.waiting) > 0 && d.queue(d.waiting[0]) {
		d.waiting = d.waiting[1:]
	}
	d.behind.Store(len(d.waiting) > 0)
	return len(d.waiting) == 0
}

func (d *deflateRecorder) run() {
	defer close(d.done)
	for j := range d.jobs {
		d.held.Add(-int64(len(j.data)))
		d.record(j)
	}
	d.waitMu.Lock()
	defer d.waitMu.Unlock()
	for _, j := range d.waiting { // what the queue had no room for at the end
		d.record(j)
	}
}

func (d *deflateRecorder) record(j recordJob) {
	r := d.r
	switch {
	case j.missed > 0:
		for range j.missed {
			d.record(recordJob{dir: j.dir, t: j.t, dropped: true, compressed: j.compressed})
		}
	case j.env != nil:
		r.rec.Frame(r.conn, j.dir, j.t, nil, 0, j.env)
	case j.dropped:
		d.lost[j.dir] = d.lost[j.dir] || j.compressed
		if !d.saidBehind {
			d.saidBehind = true
			r.warn("recording a compressed WebSocket fell behind the wire: a message from the " + j.dir.String() + " is recorded empty, flagged truncated")
		}
		r.rec.Frame(r.conn, j.dir, j.t, nil, j.flags|wire.FlagTruncated, r.msgEnv)
	case j.compressed && !d.lost[j.dir]:
		out, truncated, err := d.inflaters[j.dir].Inflate(j.data, r.limit)
		if err != nil {
			d.warn(j.dir, err)
			r.rec.TakeFrame(r.conn, j.dir, j.t, j.data, j.flags|wire.FlagBinary, r.msgEnv)
			return
		}
		if truncated {
			j.flags |= wire.FlagTruncated
		}
		r.rec.TakeFrame(r.conn, j.dir, j.t, out, j.flags, r.msgEnv)
	case j.compressed:
		d.warn(j.dir, wsframe.ErrContextLost)
		r.rec.TakeFrame(r.conn, j.dir, j.t, j.data, j.flags|wire.FlagBinary, r.msgEnv)
	default:
		r.rec.TakeFrame(r.conn, j.dir, j.t, j.data, j.flags, r.msgEnv)
	}
}

// warn says, once per socket, that a compressed message was recorded as
// sent.
func (d *deflateRecorder) warn(dir wire.Dir, err error) {
	if !d.warned {
		d.warned = true
		d.r.warn("a compressed WebSocket message from the " + dir.String() + " could not be decoded (" + err.Error() + "); recorded as sent")
	}
}

// close waits until everything submitted is recorded. Nothing may be
// submitted after it.
func (d *deflateRecorder) close() {
	close(d.jobs)
	<-d.done
}
