package capture

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// The tap is the Writer's side on the proxy's forwarding path. It copies
// the bytes and enqueues them without blocking; when the queue is full it
// drops them and counts what was lost. It never parses (it looks for
// newlines, to follow long lines), never touches the disk and takes no
// lock the writer's goroutines hold while it runs: a stream's own lock is
// the builder's only once the tap is shut.

type itemKind uint8

const (
	itemChunk itemKind = iota + 1
	itemEnd
	itemFrame
	// itemLine is one whole stdio line without its newline, handed over
	// by an import or export (see Writer.put): it skips the framer.
	itemLine
	// itemSync asks for what came before it to be committed (Writer.sync).
	itemSync
	// itemLong is the rest of a long line the tap assembled (see
	// tap_long.go): data, its first prefix bytes left for the framer.
	itemLong
)

// item is one hand-off from the tap to the framing goroutine.
type item struct {
	kind   itemKind
	stream Stream
	dir    wire.Dir
	conn   uint32
	// gap: bytes of this stream were dropped just before this item.
	// resync: the gap ended inside a line, so the bytes up to the next
	// newline belong to a frame that was lost.
	gap, resync bool
	flags       wire.Flags
	t           int64
	data        []byte
	env         *wire.Envelope
	fault       *protocol.Fault // itemFrame: what acpscope did to it
	synced      chan struct{}   // itemSync: closed once committed
	// pooled: data is the tap's copy in recycled memory, given back
	// once the builder has copied it into a segment.
	pooled bool
	// loan: data is the caller's memory (LendFrame), returned once the
	// builder has copied it into a segment or committed it, or the spool
	// has taken it.
	loan   Loan
	prefix int // itemLong: bytes at the front the framer holds
}

// queuedBytes is what the item counts for in the queue's byte bound: its
// data, but for a long line's, which is bounded by longLinesWaiting.
func (it *item) queuedBytes() int64 {
	if it.kind == itemLong {
		return 0
	}
	return int64(len(it.data))
}

type streamKey struct {
	conn   uint32
	stream Stream
}

// tapStream is the tap's memory of one stream: whether bytes were
// dropped since the last chunk that got through, and the line in
// progress (see tap_long.go).
type tapStream struct {
	gap     atomic.Bool
	midLine atomic.Bool

	// mu guards the line fields: a stream's chunks come from one
	// goroutine, but its end may be recorded from another (a pump
	// abandoned in a read, an interceptor's injected line).
	mu       sync.Mutex
	lineLen  int    // bytes of the line in progress so far
	lineLost bool   // some of them were dropped
	long     []byte // the line, once the tap assembles it
	longFrom int    // where in long the tap's bytes begin
}

// tap holds the queue and the loss counters.
type tap struct {
	queue      chan item
	queued     atomic.Int64 // bytes in the queue
	limit      int64
	streams    sync.Map // streamKey → *tapStream
	closed     atomic.Bool
	offering   atomic.Int64 // offers under way, so shut can wait them out
	lostMsgs   atomic.Int64
	lostBytes  atomic.Int64
	lossEvents atomic.Int64 // drops, so the writer can tell bursts apart
	// longWaiting counts long lines handed over and not yet recorded.
	longWaiting atomic.Int32
	buffers     chunkBuffers
}

func (tp *tap) stream(conn uint32, s Stream) *tapStream {
	k := streamKey{conn, s}
	if v, ok := tp.streams.Load(k); ok {
		return v.(*tapStream)
	}
	v, _ := tp.streams.LoadOrStore(k, new(tapStream))
	return v.(*tapStream)
}

// reserve accounts n bytes to the queue if they fit. A single item larger
// than the whole limit still goes through an empty queue, so one huge
// message is recorded rather than always lost.
func (tp *tap) reserve(n int) bool {
	q := tp.queued.Add(int64(n))
	if q > tp.limit && q != int64(n) {
		tp.queued.Add(-int64(n))
		return false
	}
	return true
}

// freshQueueBytes bounds how much may be queued before the tap stops
// copying large chunks and frames into fresh memory. Past it, a copy is
// made only into one of the recycled buffers, and without one the item
// is dropped and counted. A fresh page costs the forwarding goroutine a
// fault when first written, 13-16 µs on a virtual machine measured with
// acpscope bench, where filling the 64 MiB queue with fresh copies flat
// out held the proxy to 0.50-0.51× the minimal forwarder; with this
// bound it forwarded at 0.78-0.94×, the CPU per million lines fell from
// 1.9-2.5 s to 0.8-0.95 s and peak RSS from 210 to 120 MiB. Capture,
// behind anyway, keeps less of such a burst: until the recycled buffers
// are warm (they come from the copies made below this bound) a burst is
// recorded whole up to about this size rather than the whole queue.
//
// It was 8 MiB until fresh copies came from huge-page slabs. They made
// forwarding of huge lines faster than a builder at low priority keeps
// pace with for a few milliseconds at a time, and at 8 MiB the tap then
// cut 5-7 of 20 lines echoed (20 and 100 MB); at 16 MiB 0-2 of 28 in a
// run, as before the slabs. 64 MiB brought the old cost back: 1.7 CPU s
// per million lines flat out, against 0.7 s at 8 MiB.
const freshQueueBytes = 16 << 20

// offer enqueues it without blocking, with a copy of src as its data
// (src itself when TakeFrame set it). The copy is made only once the
// queue has room, and past freshQueueBytes only into a recycled buffer:
// under overload the forwarding path pays nothing for a chunk that is
// dropped anyway, nor faults in memory for one capture is behind on.
func (tp *tap) offer(it item, src []byte) bool {
	tp.offering.Add(1)
	defer tp.offering.Add(-1)
	return !tp.closed.Load() && tp.enqueue(it, src)
}

// enqueue is offer for a caller already counted in tp.offering that has
// seen the tap open (Chunk, EndStream): the counter is shared by every
// stream, and one update less per chunk is one cache line less to pass
// between the cores.
func (tp *tap) enqueue(it item, src []byte) bool {
	if !tp.reserve(len(src)) {
		return false
	}
	class := tp.buffers.class(len(src)) // negative: not a size the pool keeps
	if it.data == nil && class >= 0 && tp.queued.Load() > freshQueueBytes+int64(len(src)) && !tp.buffers.hasFree(class) {
		tp.queued.Add(-int64(len(src)))
		return false // behind, and only fresh memory left: not on the forwarding path
	}
	switch {
	case it.data != nil: // handed over (TakeFrame) or lent (LendFrame): not copied
	case it.kind == itemChunk:
		it.data = tp.buffers.copyOf(class, src) // the framer gives it back
	case class >= 0: // an SSE event, a WebSocket message
		it.data, it.pooled = tp.buffers.copyOf(class, src), true
	default:
		it.data = appendInSteps(make([]byte, 0, len(src)), src) // never nil: an empty Frame is a message
	}
	select {
	case tp.queue <- it:
		return true
	default:
		tp.queued.Add(-int64(len(it.data)))
		return false
	}
}

// shut refuses further offers and waits out those under way (an offer
// never blocks, so this is brief): once it returns, everything the tap
// accepted is in the queue for the builder's last drain, and nothing can
// slip in after it unrecorded and uncounted.
func (tp *tap) shut() {
	tp.closed.Store(true)
	for tp.offering.Load() != 0 {
		runtime.Gosched()
	}
}

// dropChunk counts a chunk that could not be queued: every newline in it
// ends a frame that is not recorded intact; the stream remembers the gap
// so the framer resynchronises.
func (tp *tap) dropChunk(st *tapStream, b []byte) {
	tp.lostBytes.Add(int64(len(b)))
	tp.lostMsgs.Add(int64(bytes.Count(b, []byte{'\n'})))
	st.gap.Store(true)
	st.midLine.Store(b[len(b)-1] != '\n')
	tp.lossEvents.Add(1)
}

// Chunk hands over bytes read from a stream at time t (unix ns). It copies
// b, never blocks, and counts the bytes as lost if the queue is full.
func (w *Writer) Chunk(conn uint32, s Stream, t int64, b []byte) {
	if len(b) == 0 {
		return
	}
	tp := &w.tap
	st := tp.stream(conn, s)
	tp.offering.Add(1) // the stream's line fields are ours until it ends
	defer tp.offering.Add(-1)
	if tp.closed.Load() {
		tp.dropChunk(st, b)
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	it := item{kind: itemChunk, stream: s, dir: s.Dir(), conn: conn, t: t}
	if st.long != nil {
		if b = w.extendLong(st, it, b); len(b) == 0 {
			return
		}
	}
	if st.gap.Load() {
		it.gap, it.resync = true, st.midLine.Load()
	}
	queued := tp.enqueue(it, b)
	if !queued {
		tp.dropChunk(st, b)
	} else if it.gap {
		st.gap.Store(false)
	}
	w.noteLine(st, b, !queued)
}

// EndStream marks the end of a stream; a final partial line is recorded
// with wire.FlagPartial. If the queue is full, Close flushes the stream.
func (w *Writer) EndStream(conn uint32, s Stream, t int64) {
	tp := &w.tap
	st := tp.stream(conn, s)
	tp.offering.Add(1)
	defer tp.offering.Add(-1)
	if tp.closed.Load() {
		return // Close flushes the stream (flushAll)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.long != nil {
		w.handOverLong(st, item{stream: s, dir: s.Dir(), conn: conn, t: t, flags: wire.FlagPartial})
	}
	st.lineLen, st.lineLost = 0, false
	it := item{kind: itemEnd, stream: s, dir: s.Dir(), conn: conn, t: t}
	if st.gap.Load() {
		it.gap, it.resync = true, st.midLine.Load()
	}
	if tp.enqueue(it, nil) && it.gap {
		st.gap.Store(false)
	}
}

// Frame hands over one whole message (an HTTP body, an SSE event's data,
// a WebSocket message) with its envelope. It copies b and never blocks;
// env is kept as is, so the caller must not change it afterwards.
func (w *Writer) Frame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	w.frame(item{kind: itemFrame, dir: dir, conn: conn, t: t, flags: flags, env: env}, b)
}

// TakeFrame is Frame for a body the caller hands over: the Writer keeps b
// rather than copying it, so the caller must never change b afterwards.
// It spares a second copy of a message of hundreds of megabytes.
func (w *Writer) TakeFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	if b == nil {
		b = []byte{} // an empty Frame is a message
	}
	w.frame(item{kind: itemFrame, dir: dir, conn: conn, t: t, flags: flags, env: env, data: b}, b)
}

// Altered hands over one whole message that acpscope dropped, changed,
// delayed, held or made up, with what it did (f, kept as is). It copies b
// and never blocks, like Frame; env is nil on stdio.
func (w *Writer) Altered(conn uint32, dir wire.Dir, t int64, b []byte, env *wire.Envelope, f *protocol.Fault) {
	w.frame(item{kind: itemFrame, dir: dir, conn: conn, t: t, flags: crlfFlag(b), env: env, fault: f}, b)
}

// Loan is memory a caller lends the Writer rather than let it copy
// (LendFrame).
type Loan interface {
	// Return says the Writer reads the memory no more. It is called once
	// per LendFrame, maybe before LendFrame returns.
	Return()
}

// LendFrame is Frame for memory the caller lends: the Writer reads b
// until it calls loan.Return, and the caller must not change b before
// then. A transport that reads into buffers of its own (the HTTP proxy's
// event streams and WebSocket messages) lends each message in them, and
// forwarding pays for no copy. A body that fits a segment is returned
// once copied there, a bigger one once committed.
func (w *Writer) LendFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope, loan Loan) {
	if len(b) == 0 {
		w.Frame(conn, dir, t, b, flags, env)
		loan.Return()
		return
	}
	w.frame(item{kind: itemFrame, dir: dir, conn: conn, t: t, flags: flags, env: env, data: b, loan: loan}, b)
}

func (w *Writer) frame(it item, b []byte) {
	tp := &w.tap
	if !tp.offer(it, b) {
		if it.loan != nil {
			it.loan.Return()
		}
		tp.lostBytes.Add(int64(len(b)))
		tp.lostMsgs.Add(1)
		tp.lossEvents.Add(1)
	}
}

// put hands over an item that the Writer keeps (it.data is not copied)
// and, unlike the tap's other entries, waits for room rather than drop
// it: imports and exports have no live peer to keep up with, and must
// not lose a record. It waits while the queue holds QueueChunks items or
// more than QueueBytes (an item larger than that waits for an empty
// queue). Only one goroutine may call put, and never after Close.
func (w *Writer) put(it item) {
	tp := &w.tap
	n := int64(len(it.data))
	for q := tp.queued.Load(); q != 0 && q+n > tp.limit; q = tp.queued.Load() {
		time.Sleep(putPoll)
	}
	tp.queued.Add(n)
	tp.queue <- it // blocks while the queue is full of items
}

// putPoll is how often put looks for room in the queue's byte bound.
const putPoll = 200 * time.Microsecond

// sync waits until every item put before it is committed. Like put, it
// is for imports and exports alone.
func (w *Writer) sync() {
	done := make(chan struct{})
	w.put(item{kind: itemSync, synced: done})
	<-done
}
