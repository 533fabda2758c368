package capture

import (
	"bytes"

	"github.com/acpscope/acpscope/wire"
)

// A long line is assembled by the tap as it arrives rather than by the
// builder from queued chunks. The tap copies every chunk anyway; for a
// long line it copies into the line's own memory, a mapping that grows
// without copying (lineBuffers.growLong) and that the last such line
// left warm, instead of into chunk buffers the builder must then copy
// again and that, for a line of 100 MB, come fresh from the kernel: perf
// showed the forwarding goroutines spending most of their capture time
// zeroing those pages, and the builder as much again assembling the
// line. Once long, a line is no longer in the queue's byte count and
// none of it is dropped until it ends: it holds the memory it would have
// held in the framer. Nine 100 MB lines echoed through the proxy half a
// second apart, three runs alternating with the build before: medians of
// 145–149 ms against 179–232 ms (the minimal forwarder took 179 ms), the
// slowest echo 168–182 ms against 295–358 ms, and capture lost none of
// them against 118–203 MB.
//
// The tap takes a line over only while capture is idle: no long line
// waits for the builder and the queue is not filling. Behind, the
// chunks' path costs the wire less, since it drops what capture cannot
// keep (see freshQueueBytes) where a long line is copied whole whatever
// capture then makes of it. Taking every long line it could, the proxy
// forwarded 10 MB lines paced at 1333 MB/s at 605–829 MB/s against
// 992–1142 before (capture kept 30–43 of 50 against 13–15); idle only,
// at 940–1171 against 1012–1171, keeping as many as before, while the
// echoes of single huge lines kept their gain (acpscope bench, two runs
// of each, alternating).
//
// The first longLineStart bytes have gone through the queue as chunks by
// then, and wait in the builder's framer. The tap leaves room for them at
// the front of the mapping, and the builder copies them there
// (wire.Framer.Complete) when the line's end arrives as an itemLong.
//
// tapStream's line fields are guarded by its mutex, taken by Chunk and
// EndStream inside an offer (tap.offering), and after shut by the
// builder (flushAll).

// longLineStart is the length past which the tap assembles a line.
const longLineStart = 4 << 20

// noteLine follows the line in progress through b, which has just been
// offered (and queued or dropped), and has the tap assemble it from now
// on once it is long, none of it was lost and capture is idle.
func (w *Writer) noteLine(st *tapStream, b []byte, dropped bool) {
	// IndexByte first: it is vectorised, and LastIndexByte, a byte at a
	// time, read a chunk without a newline (most of a long line) at about
	// 1 GB/s on the forwarding goroutine.
	if bytes.IndexByte(b, '\n') < 0 {
		st.lineLen += len(b)
	} else {
		st.lineLen, st.lineLost = len(b)-bytes.LastIndexByte(b, '\n')-1, false
	}
	st.lineLost = st.lineLost || dropped
	if st.lineLen > longLineStart && !st.lineLost && w.tap.longWaiting.Load() == 0 && !w.behind() {
		if m := w.lines.startLong(2 * st.lineLen); m != nil {
			st.long, st.longFrom = m[:st.lineLen], st.lineLen
		}
	}
}

// extendLong adds b to the stream's long line up to its newline; at the
// newline it hands the line over. It returns what follows the newline.
func (w *Writer) extendLong(st *tapStream, it item, b []byte) []byte {
	nl := bytes.IndexByte(b, '\n')
	part := b
	if nl >= 0 {
		part = b[:nl]
	}
	grown := w.lines.growLong(st.long, len(st.long)+len(part))
	if grown == nil { // no memory for it: the line is lost
		w.dropLong(st, len(part), nl >= 0)
		st.lineLen, st.lineLost = st.lineLen+len(part), true
	} else {
		st.long = append(grown, part...)
		st.lineLen += len(part)
		if nl >= 0 {
			w.handOverLong(st, it)
		}
	}
	if nl < 0 {
		return nil
	}
	st.lineLen, st.lineLost = 0, false
	return b[nl+1:]
}

// handOverLong queues the stream's long line as it stands, its end
// reached (it.flags: wire.FlagPartial when the stream ended first).
func (w *Writer) handOverLong(st *tapStream, it item) {
	tp := &w.tap
	it.kind, it.data, it.prefix = itemLong, st.long, st.longFrom
	st.long = nil
	if tp.longWaiting.Add(1) <= longLinesWaiting {
		select {
		case tp.queue <- it:
			return
		default:
		}
	}
	tp.longWaiting.Add(-1)
	st.long = it.data
	w.dropLong(st, 0, true)
}

// longLinesWaiting is how many long lines may wait for the builder at
// once: a huge request and its huge answer. A long line is memory the
// tap has already spent, not a copy waiting in the queue, so it is not
// held to the queue's byte bound: counted there, one 100 MB line waiting
// would have the tap drop every other message until the builder took
// it, and the next long line with it. A builder that falls further
// behind than this loses the lines, not the process its memory.
const longLinesWaiting = 2

// dropLong counts the stream's long line lost, with extra more bytes of
// it, and gives back its mapping. The pieces the framer holds of it are
// recorded as a truncated frame (see Framer.Gap): ended says the line's
// newline was among what was lost.
func (w *Writer) dropLong(st *tapStream, extra int, ended bool) {
	tp := &w.tap
	lost := int64(len(st.long) - st.longFrom + extra)
	if ended {
		lost++
		tp.lostMsgs.Add(1)
	}
	tp.lostBytes.Add(lost)
	tp.lossEvents.Add(1)
	st.gap.Store(true)
	st.midLine.Store(!ended)
	w.lines.giveBack(st.long[:cap(st.long)])
	st.long = nil
}

// completeLong records a long line handed over by the tap, with the
// pieces of it the framer f holds (builder side).
func (b *builder) completeLong(it *item, f *wire.Framer) {
	b.w.tap.longWaiting.Add(-1)
	mapping := it.data[:cap(it.data)]    // the line's capacity is its whole mapping
	if !f.Complete(it.data, it.prefix) { // part of it was lost before
		b.w.tap.lostMsgs.Add(1)
		b.w.tap.lostBytes.Add(int64(len(it.data)))
		b.w.lines.giveBack(mapping)
		return
	}
	b.line(it, it.data, it.flags)
	g := b.group()
	g.lines = append(g.lines, mapping)
}
