package capture

import (
	"runtime/debug"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// builder is the framing goroutine's state: it turns queued chunks into
// records (framing, classifying, pairing), packs them into segments and
// index postings, and hands finished groups to the committer.
type builder struct {
	w       *Writer
	framers map[streamKey]*wire.Framer
	pairers map[uint32]*wire.Pairer[pending]
	waiting map[uint32]int // requests in each pairer not yet answered
	next    uint64         // the next sequence number

	g *group

	// the open segment
	enc      segEncoder
	segBody  []byte
	segFirst uint64

	// arena holds the small bodies of the current group's segments, so
	// a segment's bodies are appended without reallocation; its chunks
	// go to the group and come back after the commit.
	arena []byte
}

// arenaChunk is the size of arena chunks; each holds at least three
// whole segments.
const arenaChunk = 1 << 20

// segValue is one segment ready to store.
type segValue struct {
	first      uint64
	meta, body []byte
}

// group is what one transaction commits.
type group struct {
	first, last uint64 // seq range; first == 0 when the group has no records
	segs        []segValue
	post        [2]map[string][]uint64 // IndexMethod, IndexSession: term → seqs
	ids         [2]idPostings          // IndexIDClient, IndexIDAgent
	pairs       [][2]uint64            // request seq, response seq
	records     int
	bytes       int64
	frames      int64 // wire frames (not batch members), for loss counts
	wireBytes   int64
	owned       [][]byte // arena chunks holding this group's bodies
	lines       [][]byte // mappings holding this group's huge lines (Writer.lines)
	loans       []Loan   // lent bodies too big to copy, returned once committed
	arenas      [][]byte // emptied chunks kept for reuse
	big         bool     // holds a message larger than bigMessage
	started     time.Time
	final       bool
	synced      []chan struct{} // closed once the group is committed (Writer.sync)
}

// maxWaiting bounds the unanswered requests remembered per connection;
// past it they are forgotten (their late responses stay unpaired).
const maxWaiting = 100_000

// bigMessage is the size after which the memory a message took is given
// back to the OS once it is committed.
const bigMessage = 16 << 20

func newBuilder(w *Writer) *builder {
	return &builder{
		w:       w,
		framers: make(map[streamKey]*wire.Framer),
		pairers: make(map[uint32]*wire.Pairer[pending]),
		waiting: make(map[uint32]int),
		next:    1,
	}
}

func (b *builder) group() *group {
	if b.g == nil {
		select {
		case b.g = <-b.w.free:
		default:
			b.g = new(group)
		}
		b.g.started = time.Now()
	}
	return b.g
}

// reset empties a committed group for reuse, keeping its allocations.
func (g *group) reset() {
	segs, pairs, arenas := g.segs[:0], g.pairs[:0], append(g.arenas, g.owned...)
	if len(arenas) > 8 {
		arenas = arenas[:8]
	}
	clear(g.segs[:cap(g.segs)]) // drop references to big bodies
	post := g.post
	for _, m := range post {
		clear(m)
	}
	ids := g.ids
	ids[0].reset()
	ids[1].reset()
	clear(g.lines)
	lines := g.lines[:0]
	clear(g.loans)
	loans := g.loans[:0]
	*g = group{lines: lines, loans: loans, segs: segs, pairs: pairs, arenas: arenas, owned: g.owned[:0], post: post, ids: ids, synced: g.synced[:0]}
}

// segmentBuffer returns an empty slice with room for a whole segment's
// bodies, from the arena.
func (b *builder) segmentBuffer() []byte {
	if cap(b.arena)-len(b.arena) < segMaxBytes {
		g := b.group()
		if n := len(g.arenas); n > 0 {
			b.arena, g.arenas = g.arenas[n-1][:0], g.arenas[:n-1]
		} else {
			b.arena = make([]byte, 0, arenaChunk)
		}
		g.owned = append(g.owned, b.arena)
	}
	return b.arena[len(b.arena):len(b.arena)]
}

// handle processes one queued item.
func (b *builder) handle(it *item) {
	switch it.kind {
	case itemFrame:
		b.message(it.conn, it.dir, it.t, it.data, it.flags, it.env, it.fault)
		b.g.frames++
		b.g.wireBytes += int64(len(it.data))
		if it.pooled { // copied into the segment by now (it fits one)
			b.w.tap.buffers.release(it.data)
		}
		if it.loan != nil {
			b.settle(it)
		}
		return
	case itemLine:
		b.line(it, it.data, it.flags)
		return
	}
	k := streamKey{it.conn, it.stream}
	f := b.framers[k]
	if f == nil {
		f = &wire.Framer{Release: b.w.tap.buffers.release, Alloc: b.w.lines.allocFunc()}
		b.framers[k] = f
	}
	emit := func(line []byte, lost bool) {
		if len(line) > bigMessage && f.Pending() == 0 {
			// The pieces it was assembled from are garbage now: return
			// them before bbolt makes its own copy at commit.
			debug.FreeOSMemory()
		}
		var flags wire.Flags
		if lost {
			flags = wire.FlagTruncated
		}
		b.line(it, line, flags)
		b.own(line)
	}
	if it.gap {
		f.Gap(it.resync, emit)
	}
	var endedLost bool
	switch it.kind {
	case itemLong:
		b.completeLong(it, f)
	case itemChunk:
		endedLost = f.Push(it.data, emit)
	case itemEnd:
		endedLost = f.Flush(func(line []byte) { b.partial(it, line) })
		delete(b.framers, k)
	}
	if endedLost {
		b.w.tap.lostMsgs.Add(1)
	}
}

// settle gives back a lent frame's memory once nothing needs it: at once
// when the frame was copied into a segment, after the commit when it is a
// segment's body of its own (see add).
func (b *builder) settle(it *item) {
	if len(it.data) > segMaxBytes {
		g := b.group()
		g.loans = append(g.loans, it.loan)
		return
	}
	it.loan.Return()
}

// partial records the unfinished line a stream ended with.
func (b *builder) partial(it *item, line []byte) {
	b.line(it, line, wire.FlagPartial)
	b.own(line)
}

// own gives the open group the mapping line was assembled in, if it was,
// to unmap once committed.
func (b *builder) own(line []byte) {
	if m := b.w.lines.take(line); m != nil {
		g := b.group()
		g.lines = append(g.lines, m)
	}
}

// flushAll records every stream's unfinished frame as partial (Close),
// first applying drops the tap could not report (its queue was full).
func (b *builder) flushAll() {
	b.w.tap.streams.Range(func(key, v any) bool {
		k, st := key.(streamKey), v.(*tapStream)
		st.mu.Lock()
		long, from := st.long, st.longFrom
		st.long = nil
		st.mu.Unlock()
		if long != nil { // the tap is shut: the line ends here
			b.w.tap.longWaiting.Add(1) // as if handed over
			b.handle(&item{kind: itemLong, stream: k.stream, dir: k.stream.Dir(), conn: k.conn,
				t: time.Now().UnixNano(), flags: wire.FlagPartial, data: long, prefix: from})
		}
		if st.gap.Swap(false) {
			b.handle(&item{kind: itemChunk, stream: k.stream, dir: k.stream.Dir(), conn: k.conn,
				t: time.Now().UnixNano(), gap: true, resync: st.midLine.Load()})
		}
		return true
	})
	for k, f := range b.framers {
		it := &item{stream: k.stream, dir: k.stream.Dir(), conn: k.conn, t: time.Now().UnixNano()}
		if f.Flush(func(line []byte) { b.partial(it, line) }) {
			b.w.tap.lostMsgs.Add(1)
		}
	}
	clear(b.framers)
}

// line records one framed line of a stream.
func (b *builder) line(it *item, line []byte, flags wire.Flags) {
	g := b.group()
	if flags&wire.FlagTruncated == 0 { // a truncated frame is already counted lost
		g.frames++
	}
	g.wireBytes += int64(len(line))
	if it.stream == StreamStderr {
		r := Record{Msg: protocol.Msg{Seq: b.next, Time: it.t, Dir: wire.DirAgent, Kind: wire.KindStderr,
			Flags: flags | crlfFlag(line), Conn: it.conn}, Size: int64(len(line))}
		b.add(&r, line)
		return
	}
	b.message(it.conn, it.dir, it.t, line, flags, nil, nil)
}

// message classifies and records one frame, and a batch's members.
func (b *builder) message(conn uint32, dir wire.Dir, t int64, body []byte, flags wire.Flags, env *wire.Envelope, f *protocol.Fault) {
	m := wire.Classify(body)
	r := b.fromMessage(conn, dir, t, &m, body, f)
	r.Flags |= flags
	r.HTTP = env
	batch := b.add(&r, body)
	for i := range m.Members {
		mem := &m.Members[i]
		el := body[mem.Start:mem.End]
		mr := b.fromMessage(conn, dir, t, &mem.Message, el, f)
		mr.Parent = batch
		mr.HTTP = env
		b.add(&mr, el)
	}
}

// fromMessage builds a record for the next seq and pairs it. A message
// that was replaced by a changed copy is not paired: the copy is what the
// other side answers.
func (b *builder) fromMessage(conn uint32, dir wire.Dir, t int64, m *wire.Message, body []byte, f *protocol.Fault) Record {
	r := Record{Msg: protocol.Msg{Seq: b.next, Time: t, Dir: dir, Kind: m.Kind, Flags: m.Flags, Conn: conn,
		Method: m.Method, Session: m.SessionID, Fault: f}, ErrorCode: m.ErrorCode, Size: int64(len(body))}
	if m.ID != nil {
		r.ID = append([]byte(nil), m.ID...)
	}
	if protocol.IsSuccessor(r.Method) {
		// A proxy-chain wrapper is stored, indexed and filtered as the
		// message it carries; its bytes stay the wrapper's.
		r.Body = body
		protocol.Resolve(&r.Msg)
		r.Body = nil
	}
	if !f.Superseded() {
		b.pair(&r, m.Result)
	}
	return r
}

// pending is what pairing keeps of a request until its response.
type pending struct {
	seq     uint64
	time    int64
	method  string
	session string
	hop     uint8
}

// pair notes requests and links responses to them.
func (b *builder) pair(r *Record, result []byte) {
	if r.Kind != wire.KindRequest && r.Kind != wire.KindResponse && r.Kind != wire.KindError {
		return
	}
	p := b.pairers[r.Conn]
	if p == nil || b.waiting[r.Conn] >= maxWaiting {
		p = wire.NewPairer[pending]() // a peer that never answers must not grow memory without end
		b.pairers[r.Conn] = p
		b.waiting[r.Conn] = 0
	}
	if r.Kind == wire.KindRequest {
		if _, dup := p.Request(r.Dir, r.ID, pending{r.Seq, r.Time, r.Method, r.Session, r.Hop}); !dup {
			b.waiting[r.Conn]++
		}
		return
	}
	req, ok := p.Response(r.Dir, r.ID)
	if !ok {
		return
	}
	b.waiting[r.Conn]--
	r.Peer = req.seq
	r.Latency = time.Duration(r.Time - req.time)
	r.Method, r.Hop = req.method, req.hop
	r.Session = protocol.ResponseSession(req.method, req.session, result)
	g := b.group()
	g.pairs = append(g.pairs, [2]uint64{req.seq, r.Seq})
}

// add stores r (whose Seq is b.next) with body and returns its seq.
func (b *builder) add(r *Record, body []byte) uint64 {
	g := b.group()
	if g.first == 0 {
		g.first = r.Seq
	}
	g.last = r.Seq
	g.records++
	g.bytes += int64(len(body))
	b.next++
	b.w.records.Add(1)
	if len(body) > bigMessage {
		g.big = true
	}
	if len(body) > segMaxBytes {
		b.closeSegment()
		r.Body = body
		b.segFirst = r.Seq
		b.enc.add(r)
		b.segBody = body
		b.closeSegment()
	} else {
		if b.enc.count == segMaxRecords || len(b.segBody)+len(body) > segMaxBytes {
			b.closeSegment()
		}
		if b.enc.count == 0 {
			b.segFirst = r.Seq
			b.segBody = b.segmentBuffer()
		}
		off := len(b.segBody)
		b.segBody = append(b.segBody, body...)
		b.arena = b.arena[:len(b.arena)+len(body)]
		r.Body = b.segBody[off:len(b.segBody):len(b.segBody)]
		b.enc.add(r)
	}
	r.Body = nil
	b.index(r)
	return r.Seq
}

// index adds r's terms to the group's postings.
func (b *builder) index(r *Record) {
	if r.Method != "" {
		b.post(IndexMethod, r.Method, r.Seq)
	}
	if r.Session != "" {
		b.post(IndexSession, r.Session, r.Seq)
	}
	if r.ID == nil {
		return
	}
	sender := r.Dir
	switch r.Kind {
	case wire.KindRequest:
	case wire.KindResponse, wire.KindError:
		sender = r.Dir.Reverse()
	default:
		return
	}
	ix := 0
	if sender == wire.DirAgent {
		ix = 1
	}
	g := b.group()
	g.ids[ix].add(g.first, indexTerm(string(r.ID)), r.Seq)
}

func (b *builder) post(ix Index, term string, seq uint64) {
	g := b.group()
	m := g.post[ix-1]
	if m == nil {
		m = make(map[string][]uint64)
		g.post[ix-1] = m
	}
	m[term] = append(m[term], seq)
}

// closeSegment moves the open segment into the group.
func (b *builder) closeSegment() {
	if b.enc.count == 0 {
		return
	}
	g := b.group()
	g.segs = append(g.segs, segValue{first: b.segFirst, meta: b.enc.value(), body: b.segBody})
	b.enc.reset()
	b.segBody = nil
}

// take ends the current group and returns it (nil when empty).
func (b *builder) take() *group {
	b.closeSegment()
	g := b.g
	b.g = nil
	b.arena = nil // the group owns its arena chunks now
	return g
}

// full reports whether the group reached a commit bound.
func (b *builder) full() bool {
	g := b.g
	o := &b.w.opts
	return g != nil && (g.records >= o.CommitRecords || g.bytes >= o.CommitBytes)
}
