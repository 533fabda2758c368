package proxy

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acpscope/acpscope/internal/tap"
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
	r       *byteRelay
	jobs    chan recordJob
	maxHeld int64        // bytes that may wait to be recorded
	held    atomic.Int64 // bytes waiting
	// missed counts, by direction, messages that found the queue full;
	// the next submit in that direction queues a mark for them first, so
	// they are recorded, empty and truncated, in their place.
	// missedDeflated says one of them was compressed.
	missed         [3]atomic.Int64
	missedDeflated [3]atomic.Bool
	inflaters      [3]wsframe.Inflater // by wire.Dir
	lost           [3]bool             // a compressed message was not kept: later ones cannot be decoded
	warned         bool                // said that a message could not be decoded
	saidBehind     bool                // said that a message was not kept
	done           chan struct{}
	// late holds the closes that found the queue full, in order, until
	// the queue takes them: a close is never dropped, for it says how
	// the socket ended, and nothing else would.
	lateMu  sync.Mutex
	late    []recordJob
	hasLate atomic.Bool // late holds any: a message's submit looks no further
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

// submit hands a record over without ever waiting.
func (d *deflateRecorder) submit(j recordJob) {
	caughtUp := d.queueLate()
	if j.env != nil {
		if !caughtUp || !d.queue(j) {
			d.keepLate(j)
		}
		return
	}
	if !d.markMissed(j.dir) {
		d.miss(j)
		return
	}
	n := int64(len(j.data))
	if j.env == nil && d.held.Load()+n > d.maxHeld {
		j.data, j.dropped, n = nil, true, 0
	}
	d.held.Add(n)
	select {
	case d.jobs <- j:
	default:
		d.held.Add(-n)
		d.miss(j)
	}
}

// queue hands j over if the queue has room.
func (d *deflateRecorder) queue(j recordJob) bool {
	select {
	case d.jobs <- j:
		return true
	default:
		return false
	}
}

// keepLate keeps a close until the queue takes it: a few per socket at
// most, for closes end it.
func (d *deflateRecorder) keepLate(j recordJob) {
	d.lateMu.Lock()
	d.late = append(d.late, j)
	d.hasLate.Store(true)
	d.lateMu.Unlock()
}

// queueLate queues the closes kept while the queue was full, in order,
// and reports whether none is left waiting.
func (d *deflateRecorder) queueLate() bool {
	if !d.hasLate.Load() {
		return true
	}
	d.lateMu.Lock()
	defer d.lateMu.Unlock()
	for len(d.late) > 0 && d.queue(d.late[0]) {
		d.late = d.late[1:]
	}
	d.hasLate.Store(len(d.late) > 0)
	return len(d.late) == 0
}

// markMissed queues the mark of dir's missed messages, if any, ahead of
// what comes next; it reports false when the queue is still full.
func (d *deflateRecorder) markMissed(dir wire.Dir) bool {
	n := d.missed[dir].Load()
	if n == 0 {
		return true
	}
	mark := recordJob{dir: dir, t: tap.Now(), missed: n, compressed: d.missedDeflated[dir].Load()}
	select {
	case d.jobs <- mark:
		d.missed[dir].Add(-n)
		d.missedDeflated[dir].Store(false)
		return true
	default:
		return false
	}
}

// miss counts a message (not a close) that found the queue full.
func (d *deflateRecorder) miss(j recordJob) {
	if j.env == nil {
		d.missed[j.dir].Add(1)
		if j.compressed {
			d.missedDeflated[j.dir].Store(true)
		}
	}
}

func (d *deflateRecorder) run() {
	defer close(d.done)
	for j := range d.jobs {
		d.held.Add(-int64(len(j.data)))
		d.record(j)
	}
	for _, j := range d.late { // closes the queue had no room for
		d.record(j)
	}
	for dir := range d.missed { // what the last submits missed
		if n := d.missed[dir].Load(); n > 0 {
			d.record(recordJob{dir: wire.Dir(dir), t: tap.Now(), missed: n, compressed: d.missedDeflated[dir].Load()})
		}
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
