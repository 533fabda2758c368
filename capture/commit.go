package capture

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// pollInterval and pollIdleLimit shape the builder's polling: every
// pollInterval while busy, parked after pollIdleLimit empty polls (100
// ms of quiet). Each poll wakes a thread, and on two cores the builder
// woken then delays a round trip that needs the same CPU. At 2 ms rather
// than 500 µs, RTT p50 stayed within 1.1× the minimal forwarder in 59 of
// 80 runs against 37, and p99 within 1.3× in 77 against 74 (eight
// invocations of acpscope bench for each, ten runs of round trips in
// each); at 5 ms p50 held in 28 of 30 runs but p99 in only 23, as each
// poll found more to do. 2 ms of traffic is well within the tap's bounds.
const (
	pollInterval  = 2 * time.Millisecond
	pollIdleLimit = 50
)

// build is the builder goroutine: it drains the tap's queue into groups
// and hands each to the committer when it reaches a bound (CommitEvery
// after its first record, CommitRecords, CommitBytes). While it is
// behind, the queue goes through the spool first. Close stops it.
func (w *Writer) build() {
	w.yieldToWire()
	defer close(w.commits)
	b := newBuilder(w)
	sp := newSpool(filepath.Dir(w.path), w.opts.SpoolBytes)
	defer sp.close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	waiting := time.NewTimer(time.Hour)
	waiting.Stop()
	var due <-chan time.Time
	send := func(final bool) {
		g := b.take()
		if g == nil {
			g = &group{}
		}
		g.final = final
		timer.Stop()
		due = nil
		w.handOver(g, sp, waiting)
	}
	handle := func(it *item) {
		if it.kind == itemSync { // commit what is open now, and say when
			g := b.group()
			g.synced = append(g.synced, it.synced)
			send(false)
			return
		}
		open := b.g != nil
		b.handle(it)
		if !open && b.g != nil {
			timer.Reset(w.opts.CommitEvery)
			due = timer.C
		}
		if b.full() {
			send(false)
		}
	}
	take := func(it item) { // one item off the tap's queue
		// Behind, the spool starts with data worth moving: the pieces of
		// a long line stay on the usual path (see spool.spillable). When
		// they started it too, echoes of 20 and 100 MB lines through the
		// proxy lost parts of lines in 3 of 35 bench runs, against none
		// in 16 since and none in 21 of the build without a spool.
		if sp.active() || w.behind() && sp.spillable(&it) {
			w.spill(sp, it)
			return
		}
		w.tap.queued.Add(-it.queuedBytes())
		handle(&it)
	}
	stop := w.stop
	idle := 0
	for {
		if sp.active() { // behind: record the oldest spooled item
			w.spillQueued(sp)
			select {
			case <-stop:
				stop = nil
				w.sayBehind(sp)
			default:
			}
			select {
			case <-due:
				send(false)
			case <-w.poke:
				send(false)
			default:
				if it, ok := w.unspool(sp); ok {
					handle(&it)
				}
			}
			continue
		}
		// While traffic flows, poll the queue on a short timer instead of
		// parking on it: a send to a parked receiver makes the sender's
		// thread wake ours, a syscall on the proxy's forwarding path for
		// every chunk. Parked again after a quiet spell, so an idle proxy
		// costs nothing.
		if idle < pollIdleLimit {
			select {
			case it := <-w.tap.queue:
				take(it)
				idle = 0
				continue
			case <-due:
				send(false)
				continue
			case <-w.poke:
				send(false)
				continue
			case <-w.stop:
				idle = pollIdleLimit
			default:
				time.Sleep(pollInterval)
				idle++
				continue
			}
		}
		select {
		case it := <-w.tap.queue:
			take(it)
			idle = 0
		case <-due:
			send(false)
		case <-w.poke:
			send(false)
		case <-w.stop:
			for drained := false; !drained; {
				select {
				case it := <-w.tap.queue:
					take(it)
				default:
					drained = true
				}
			}
			if sp.active() {
				continue // recorded above, then back here to finish
			}
			b.flushAll()
			send(true)
			return
		}
	}
}

// yieldToWire lowers the calling goroutine's priority when forwarding
// runs beside the writer (see runInBackground).
func (w *Writer) yieldToWire() {
	if !w.opts.noWire {
		runInBackground()
	}
}

// commitLoop is the committer goroutine: one transaction per group. It
// ends when the builder closes the channel after the final group.
func (w *Writer) commitLoop() {
	w.yieldToWire()
	defer close(w.done)
	defer w.lines.drop()
	defer func() {
		if w.pages != nil {
			w.pages.Close()
		}
	}()
	for g := range w.commits {
		w.awaiting.Add(-g.bytes)
		if d := w.opts.CommitDelay; d > 0 {
			time.Sleep(d)
		}
		if gate := w.opts.commitGate; gate != nil {
			<-gate
		}
		w.checkLoss()
		err := w.commit(g)
		if err != nil {
			w.writeErrs.Add(1)
			w.tap.lostMsgs.Add(g.frames)
			w.tap.lostBytes.Add(g.wireBytes)
			w.metaMu.Lock()
			w.lastError = err.Error()
			w.metaDirty = true
			w.metaMu.Unlock()
			w.failing = true
			w.checkLoss()
		} else {
			w.failing = false
			w.committed.Add(uint64(g.records))
			if w.opts.releaseMapped {
				releaseDB(w.db, w.path)
			}
		}
		if err == nil && g.last != 0 {
			w.commitSig.advance(g.last)
		}
		if w.feed != nil && err == nil {
			w.feed.advance(g.last)
		}
		for _, c := range g.synced {
			close(c)
		}
		w.recycle(g)
	}
}

// recycle hands a committed group's huge-line mappings back for reuse,
// and the group itself back to the builder, or after a big message gives
// its memory back to the OS (RSS stays near the largest message rather
// than a multiple of it).
func (w *Writer) recycle(g *group) {
	for _, m := range g.lines {
		w.lines.giveBack(m)
	}
	for _, l := range g.loans {
		l.Return()
	}
	big := g.big
	g.reset() // drops the references to the bodies
	if big {
		debug.FreeOSMemory()
		return
	}
	select {
	case w.free <- g:
	default:
	}
}

// checkLoss tells apart bursts of loss: any new loss since the last
// check starts a burst (and one warning) unless one is already running.
// Failing writes are one burst until a commit succeeds again: a removed
// file fails every commit, and used to print a warning for each.
func (w *Writer) checkLoss() {
	events := w.tap.lossEvents.Load() + w.writeErrs.Load()
	if events == w.seenLoss {
		w.inBurst = w.failing
		return
	}
	w.seenLoss = events
	if w.inBurst {
		return
	}
	w.inBurst = true
	w.bursts.Add(1)
	l := w.Meta().Loss
	if errors.Is(w.failed, errFileGone) {
		w.opts.Warn(fmt.Sprintf("capture lost %d messages (%d bytes) so far: %s was removed or replaced while recording; forwarding continues, nothing more will be recorded, and the loss is counted and summed up at the end",
			l.Messages, l.Bytes, w.path))
		return
	}
	if l.LastError != "" && l.WriteErrors > 0 {
		w.opts.Warn(fmt.Sprintf("capture lost %d messages (%d bytes) so far: writing %s failed: %s; forwarding continues, and further loss is counted and summed up at the end",
			l.Messages, l.Bytes, w.path, l.LastError))
		return
	}
	w.opts.Warn(fmt.Sprintf("capture lost %d messages (%d bytes) so far: traffic is arriving faster than it can be recorded (queue full); forwarding continues",
		l.Messages, l.Bytes))
}

// commit writes one group in one transaction.
func (w *Writer) commit(g *group) error {
	if w.failed != nil {
		return w.failed
	}
	if fi, err := os.Stat(w.path); err != nil || !os.SameFile(fi, w.info) {
		w.failed = fmt.Errorf("%s: %w", w.path, errFileGone)
		return w.failed
	}
	w.metaMu.Lock()
	if g.final {
		w.meta.End = w.givenEnd
		if w.meta.End.IsZero() {
			w.meta.End = time.Now().UTC()
		}
	}
	meta := w.meta
	meta.Loss = w.loss()
	w.noteBacklog(&meta)
	storeMeta := w.metaDirty || g.final || meta.Loss != w.lossSaved
	w.metaDirty = false
	w.metaMu.Unlock()
	if g.records == 0 && !storeMeta {
		return nil
	}
	err := w.db.Update(func(tx *bolt.Tx) error {
		if err := putGroup(tx, g); err != nil {
			return err
		}
		if storeMeta {
			return putMeta(tx.Bucket(bucketMeta), &meta)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("committing to %s: %w", w.path, err)
	}
	w.uncacheBig(g)
	if storeMeta {
		w.lossSaved = meta.Loss
		if w.feed != nil {
			w.feed.metaGen.Add(1)
		}
	}
	return nil
}

// uncacheBig drops from the page cache the pages the group's huge bodies
// (those in bodies-big) were just written to. Such a body is written once
// and seldom read soon, and a new page in the page cache is fresh memory:
// on a virtual machine, copying 10 MB lines into new pages was a third of
// the writer's CPU (perf). Dropped once on disk, the pages go back to the
// kernel warm, and the next huge body is written into them.
// BenchmarkWriter10MB, four pairs alternating with the build before:
// 355–453 MB/s and 313–480 MB per CPU second, against 172–334 and
// 147–306. Through the proxy, 10 MB lines paced at 250 MB/s lost 5–16 of
// 50 with the CPUs 50–63% busy, against 21–30 at 72–76% (three pairs);
// at 400 MB/s both lost 26–43. Best effort: a reader later faults the
// pages back in from disk.
func (w *Writer) uncacheBig(g *group) {
	var firsts []uint64
	for _, s := range g.segs {
		if len(s.body) > segMaxBytes {
			firsts = append(firsts, s.first)
		}
	}
	if len(firsts) == 0 || w.opts.NoSync { // unsynced pages are dirty, and stay
		return
	}
	if w.pages == nil {
		f, err := os.Open(w.path)
		if err != nil {
			return
		}
		w.pages = f
	}
	_ = w.db.View(func(tx *bolt.Tx) error {
		base := w.db.Info().Data // no remap while a transaction is open
		for _, first := range firsts {
			for _, r := range pieceRanges(tx, base, first) {
				uncache(w.pages, r[0], r[1]-r[0])
			}
		}
		return nil
	})
}

// pieceRanges returns the stretches of the file, [start, end), that
// the pieces of the huge body of segment first lie in, rounded out to
// whole pages and neighbours merged. bbolt maps the whole file from
// offset 0 at base, so a value's offset in the map is its offset in the
// file; the pages around the pieces hold their leaves' headers and keys.
func pieceRanges(tx *bolt.Tx, base uintptr, first uint64) [][2]int64 {
	big := tx.Bucket(bucketBig)
	if big == nil || base == 0 {
		return nil
	}
	own := big.Bucket(seqKey(first))
	if own == nil {
		return nil
	}
	page := int64(os.Getpagesize())
	var ranges [][2]int64
	c := own.Cursor()
	for k, piece := c.First(); k != nil; k, piece = c.Next() {
		at := uintptr(unsafe.Pointer(unsafe.SliceData(piece)))
		if at < base || len(piece) == 0 {
			continue
		}
		start := int64(at-base) &^ (page - 1)
		end := (int64(at-base) + int64(len(piece)) + page - 1) &^ (page - 1)
		if n := len(ranges); n > 0 && start <= ranges[n-1][1]+page {
			ranges[n-1][1] = max(ranges[n-1][1], end)
			continue
		}
		ranges = append(ranges, [2]int64{start, end})
	}
	return ranges
}

// putBodies stores a segment's bodies. A body larger than a segment goes
// into a bucket of its own: bbolt rewrites the whole last leaf of a bucket
// whenever a key is appended, and a leaf holds up to four values however
// large, so in bodies each 10 MB message was written to disk again with
// the next three commits. In its own bucket it is written once, in
// pieces of bodyPieceBytes (see there for why).
func putBodies(tx *bolt.Tx, bodies *bolt.Bucket, k, all []byte) error {
	if len(all) <= segMaxBytes {
		return bodies.Put(k, all)
	}
	own, err := tx.Bucket(bucketBig).CreateBucket(k)
	if err != nil {
		return err
	}
	own.FillPercent = 1 // append-only: keep pages full
	for i := uint32(0); len(all) > 0; i++ {
		n := min(len(all), bodyPieceBytes)
		if err := own.Put(pieceKey(i), all[:n]); err != nil {
			return err
		}
		all = all[n:]
	}
	return nil
}

// segmentBodies returns a segment's bodies, concatenated, wherever
// putBodies stored them (nil when they are missing). owned says they are
// a copy in memory of their own, made from a huge body's pieces, rather
// than a view into the mapped file valid for tx alone. A copy is made
// piece by piece, each piece's pages of the map released once copied.
func segmentBodies(tx *bolt.Tx, first uint64) (all []byte, owned bool) {
	k := seqKey(first)
	if all := tx.Bucket(bucketBodies).Get(k); all != nil {
		return all, false
	}
	big := tx.Bucket(bucketBig)
	if big == nil {
		return nil, false
	}
	own := big.Bucket(k)
	if own == nil {
		return nil, false
	}
	if whole := own.Get(keyBody); whole != nil { // format 3
		return whole, false
	}
	// Sized from the pieces themselves, which are in the file, and not
	// from their keys: a damaged file could name any size there.
	size := 0
	c := own.Cursor()
	for k, piece := c.First(); k != nil; k, piece = c.Next() {
		size += len(piece)
	}
	all = make([]byte, 0, size)
	for k, piece := c.First(); k != nil; k, piece = c.Next() {
		all = append(all, piece...) // a piece at a time: see bodyPieceBytes
		releaseRange(piece)
	}
	return all, true
}

// putGroup stores a group's segments, postings and pairs.
func putGroup(tx *bolt.Tx, g *group) error {
	if g.records == 0 {
		return nil
	}
	msgs, bodies := tx.Bucket(bucketMsgs), tx.Bucket(bucketBodies)
	msgs.FillPercent, bodies.FillPercent = 1, 1 // append-only: keep pages full
	for _, s := range g.segs {
		k := seqKey(s.first)
		if err := msgs.Put(k, s.meta); err != nil {
			return err
		}
		if err := putBodies(tx, bodies, k, s.body); err != nil {
			return err
		}
	}
	for i, terms := range g.post {
		bk := tx.Bucket(indexBucket(Index(i + 1)))
		for term, seqs := range terms {
			v := appendPostings(make([]byte, 0, len(seqs)*2), g.first, seqs)
			if err := bk.Put(postingKey(indexTerm(term), g.first), v); err != nil {
				return err
			}
		}
	}
	for i := range g.ids {
		if err := g.ids[i].put(tx.Bucket(indexBucket(IndexIDClient+Index(i))), g.first); err != nil {
			return err
		}
	}
	if err := putPairs(tx.Bucket(bucketPairs), g.first, g.pairs); err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(keyLast, seqKey(g.last))
}
