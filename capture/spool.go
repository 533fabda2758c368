package capture

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/acpscope/acpscope/internal/human"
)

// The spool is where the builder puts what the tap hands over while
// capture is behind the wire. Flat out on two cores, framing,
// classifying and committing need more CPU than forwarding leaves them,
// and the tap's queue in memory holds only a moment of traffic (past
// freshQueueBytes it copies into recycled buffers alone): before the
// spool, a second of 200 B lines at 1M/s lost a seventh to a half of
// them. Writing a chunk to a file and reading it back costs a fraction
// of what recording it does, so the builder moves the queue to disk
// whenever it runs long, and records from the spool, in order, until it
// has caught up, and while it waits for the committer. The disk, not the
// CPU, then bounds how long a burst capture keeps whole.
//
// Item metadata stays in memory in arrival order; only data goes to the
// file. Data the file cannot take (an item larger than a pooled chunk,
// or the spool is full or failed) stays in memory and in the tap's byte
// count, so the tap still drops and counts what memory cannot hold.
//
// The file is unlinked as soon as it is made (where the platform
// allows), so it vanishes with the process however that ends. What it
// holds is not in the capture until the builder has recorded it: a
// SIGKILL while capture is behind loses the backlog with the open
// commit window.
type spool struct {
	dir      string
	limit    int64 // bytes the file may hold unread
	f        *os.File
	unlinked bool  // else the file is removed at close (unlinking an open file can fail)
	err      error // making or writing the file failed: spill no more

	items []spooled // arrival order, from head
	head  int
	wr    int64 // where the next data goes in the file
	rd    int64 // where the data not yet read back begins
	freed int64 // file bytes before this offset are given back

	total, peak int64 // bytes ever spilled, and the most unread at once
}

// spooled is one item in the spool: its data is in the file at off (n
// bytes) when onDisk, else still in it.data.
type spooled struct {
	it     item
	off    int64
	n      int
	onDisk bool
}

// spillAbove is how much may wait in the tap's queue before the builder
// moves it to the spool: half of freshQueueBytes, so the tap still has
// fresh memory for a burst while the builder gets to it.
const spillAbove = freshQueueBytes / 2

// behind reports whether the tap's queue is filling: past spillAbove or
// half its byte bound, or half full of items (a stream of small chunks
// fills it by count first).
func (w *Writer) behind() bool {
	return w.tap.queued.Load() > min(spillAbove, w.tap.limit/2) || len(w.tap.queue) > cap(w.tap.queue)/2
}

// DefaultSpoolBytes bounds the spool: at the 200 MB/s of 1M lines/s of
// 200 B, about five seconds of capture falling behind. A quarter of the
// free space is the bound when that is less (see freeBytes).
const DefaultSpoolBytes = 1 << 30

// sayBehindAtExit is the backlog at Close worth a word: the builder takes
// about a second for 100 MiB of small lines.
const sayBehindAtExit = 32 << 20

// spoolMaxItems bounds the items waiting in the spool. Their metadata
// stays in memory, about a hundred bytes each: a stream of small chunks
// would otherwise hold more memory than its data took on disk. At the
// bound the builder leaves items in the tap's queue, whose own bounds
// then apply.
const spoolMaxItems = 1 << 18

// punchStep is how much read-back data collects before it is punched out
// of the file, so a long backlog does not hold disk it has recorded.
const punchStep = 16 << 20

func newSpool(dir string, limit int64) *spool {
	return &spool{dir: dir, limit: limit}
}

// usable reports whether the spool may take data to disk at all.
func (s *spool) usable() bool { return s.limit > 0 && s.err == nil }

// active reports whether anything waits in the spool: while it does,
// every item goes through it, so order is kept.
func (s *spool) active() bool { return s.head < len(s.items) }

// full reports whether the spool holds as many items as it may.
func (s *spool) full() bool { return len(s.items)-s.head >= spoolMaxItems }

// unread is the data in the file not yet read back.
func (s *spool) unread() int64 { return s.wr - s.rd }

// held is the disk the file holds: its read-back data is given back in
// punchStep pieces where the platform can punch holes, else only when
// the spool empties.
func (s *spool) held() int64 { return s.wr - s.freed }

// push appends it, writing its data to the file when it can. It returns
// whether the data went to disk: the tap's byte count no longer holds
// it then, and the memory it was in is given back by release.
func (s *spool) push(it item, release func([]byte)) bool {
	e := spooled{it: it, n: len(it.data)}
	if s.spillable(&it) && s.write(it.data) {
		e.off, e.onDisk = s.wr-int64(e.n), true
		if it.kind == itemChunk || it.pooled { // the tap's copy, not a caller's
			release(it.data)
		}
		if it.loan != nil { // a caller's, lent: it comes back in the tap's memory
			it.loan.Return()
			e.it.loan, e.it.pooled = nil, true
		}
		e.it.data = nil
	}
	s.items = append(s.items, e)
	return e.onDisk
}

// spillable reports whether its data belongs on disk: chunks and frames
// up to a pooled chunk's size. Larger data was copied once already and
// would need fresh memory of its size to come back. A chunk without a
// newline is a piece of a long line: it costs the builder nothing until
// the line ends, and through the file it would cost copies on the path
// that must carry huge lines at copy speed.
func (s *spool) spillable(it *item) bool {
	if !s.usable() || len(it.data) == 0 || len(it.data) > maxPooledChunk {
		return false
	}
	if it.kind == itemChunk && bytes.IndexByte(it.data, '\n') < 0 {
		return false
	}
	if it.kind == itemFrame && it.fault != nil {
		return false // rare, and kept whole with what was done to it
	}
	return (it.kind == itemChunk || it.kind == itemFrame) && s.held()+int64(len(it.data)) <= s.limit
}

// write appends b to the file, making the file on first use.
func (s *spool) write(b []byte) bool {
	if s.f == nil && !s.open() {
		return false
	}
	if _, err := s.f.WriteAt(b, s.wr); err != nil {
		s.err = fmt.Errorf("writing the spool file: %w", err)
		return false
	}
	s.wr += int64(len(b))
	s.total += int64(len(b))
	s.peak = max(s.peak, s.unread())
	return true
}

// open makes the file, private, beside the capture, and unlinks it.
func (s *spool) open() bool {
	f, err := os.CreateTemp(s.dir, ".acpscope-spool-*")
	if err != nil {
		s.err = fmt.Errorf("making a spool file in %s: %w", s.dir, err)
		return false
	}
	s.f = f
	s.unlinked = os.Remove(f.Name()) == nil
	if free := freeBytes(s.dir); free > 0 {
		s.limit = min(s.limit, free/4)
	}
	return true
}

// pop takes the oldest item, reading its data back into memory from
// buf (which returns a buffer of length n) when it went to disk. On a
// read error the data is not what was written, and the spool takes no
// more.
func (s *spool) pop(buf func(n int) []byte) (it item, fromDisk bool, err error) {
	e := s.items[s.head]
	s.items[s.head] = spooled{} // drop references
	s.head++
	it = e.it
	if e.onDisk {
		it.data, fromDisk = buf(e.n), true
		if _, err = s.f.ReadAt(it.data, e.off); err != nil {
			err = fmt.Errorf("reading back the spool file: %w", err)
			s.err = err
		}
		s.rd = e.off + int64(e.n)
		if s.rd-s.freed >= punchStep {
			s.freed = punchHole(s.f, s.freed, s.rd&^(punchStep-1))
		}
	}
	s.compact()
	return it, fromDisk, err
}

// compact rewinds the file once everything is read back, and drops
// items already handed out once they are most of the slice.
func (s *spool) compact() {
	if !s.active() {
		s.items, s.head = s.items[:0], 0
		if s.wr > 0 {
			s.wr, s.rd, s.freed = 0, 0, 0
			if s.f != nil {
				s.f.Truncate(0)
			}
		}
		return
	}
	if s.head > 1024 && s.head*2 > len(s.items) {
		n := copy(s.items, s.items[s.head:])
		clear(s.items[n:])
		s.items, s.head = s.items[:n], 0
	}
}

// close closes the file, and removes it if it could not be unlinked.
func (s *spool) close() {
	if s.f == nil {
		return
	}
	s.f.Close()
	if !s.unlinked {
		os.Remove(s.f.Name())
	}
}

// spill puts one item off the tap's queue into the spool.
func (w *Writer) spill(sp *spool, it item) {
	n := int64(len(it.data))
	if sp.push(it, w.tap.buffers.release) {
		w.tap.queued.Add(-n)
		w.spooled.Store(sp.total)
		w.spoolPeak.Store(sp.peak)
	}
	if sp.err != nil && !w.spoolWarned {
		w.spoolWarned = true
		w.opts.Warn(fmt.Sprintf("capture cannot spool what it is behind on (%v); what the queue in memory cannot hold is dropped and counted", sp.err))
	}
}

// sayBehind tells, at Close, of a backlog worth waiting for.
func (w *Writer) sayBehind(sp *spool) {
	if n := sp.unread(); n >= sayBehindAtExit {
		w.opts.Warn(fmt.Sprintf("capture is %s behind the wire; recording it before exit", human.Size(n)))
	}
}

// spillQueued moves what waits in the tap's queue now into the spool,
// behind what is there; a bounded number at a time, so the builder also
// records while the wire outruns it.
func (w *Writer) spillQueued(sp *spool) {
	for range spillBatch {
		if sp.full() {
			return
		}
		select {
		case it := <-w.tap.queue:
			w.spill(sp, it)
		default:
			return
		}
	}
}

// spillBatch is how many items spillQueued moves at most.
const spillBatch = 256

// unspool takes the oldest item from the spool to record. Data that
// could not be read back is counted lost (at least one message: a chunk
// went to disk only with a newline in it). A chunk comes back as a gap
// in its stream, so the framer cuts the line it was part of and resumes
// at the next newline, as after a drop; a frame is not recorded, and
// unspool reports false.
func (w *Writer) unspool(sp *spool) (item, bool) {
	it, fromDisk, err := sp.pop(w.tap.buffers.alloc)
	if !fromDisk {
		w.tap.queued.Add(-it.queuedBytes())
	}
	if err == nil {
		return it, true
	}
	w.tap.lostBytes.Add(int64(len(it.data)))
	w.tap.lostMsgs.Add(1)
	w.tap.lossEvents.Add(1)
	w.tap.buffers.release(it.data)
	w.opts.Warn(fmt.Sprintf("capture lost what it had spooled: %v", err))
	if it.kind == itemChunk {
		return item{kind: itemChunk, stream: it.stream, dir: it.dir, conn: it.conn, t: it.t, gap: true, resync: true}, true
	}
	return it, false
}

// handOver gives a finished group to the committer. While it waits, the
// tap's queue goes to the spool once it runs long, or at once when the
// spool holds anything: a committer held up by a slow disk (an fsync
// that takes seconds) would otherwise stall the builder with it, and the
// queue would fill behind them both. It returns once g waits for the
// committer, which it may as long as roomToWait says so.
func (w *Writer) handOver(g *group, sp *spool, waiting *time.Timer) {
	for {
		commits := w.commits
		if !w.roomToWait(g) {
			commits = nil // enough waits for the committer: look again soon
		}
		var queue chan item // nil: the queue stays where it is
		if sp.usable() && !sp.full() && (sp.active() || w.behind()) {
			queue = w.tap.queue
		}
		w.awaiting.Add(g.bytes)
		waiting.Reset(pollInterval)
		select {
		case commits <- g:
			waiting.Stop()
			return
		case it := <-queue:
			w.spill(sp, it)
		case <-waiting.C:
		}
		w.awaiting.Add(-g.bytes)
	}
}

// commitsWaiting and commitWaitBytes bound the groups that wait for the
// committer: no more than commitsWaiting, and past the first no more
// than commitWaitBytes of bodies in all. A commit's time varies (10 MB
// lines paced at 500 MB/s took 10-19 ms each to commit, and up to 48 ms
// now and then, most often while the file grew), and while the builder
// waits to hand a group over, a long line's chunks pile up in the tap's
// queue, where the spool does not take them, until the tap drops them.
// In twenty runs of 50 such lines, alternating, capture lost 66 lines (9
// runs lost none) with one group waiting, 52 (13) with up to 32 MiB and
// 19 (15) with 64 MiB. Small messages fill groups of 4 MiB at most, so
// 64 MiB is sixteen of them.
const (
	commitsWaiting  = 16
	commitWaitBytes = 64 << 20
)

// roomToWait reports whether g may wait for the committer now. A copy
// (an import or export, WriterOptions.noWire) has no wire to keep up
// with, only its promise of memory, so one group at most waits there:
// with sixteen allowed, a commit slowed by a busy disk let groups pile
// up, and an export of a million records peaked at 57-60 MiB beside
// stress-ng --hdd 2, against 49-52 MiB without it, and at 66 MiB once
// in CI, over its bound of 64.
func (w *Writer) roomToWait(g *group) bool {
	if w.opts.noWire {
		return len(w.commits) == 0
	}
	return len(w.commits) == 0 || w.awaiting.Load()+g.bytes <= commitWaitBytes
}
