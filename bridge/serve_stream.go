package bridge

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/wire"
)

// DefaultStreamBuffer bounds the bytes a connection's SSE streams hold
// together. Before a client opens a stream (a session's updates sent
// before its GET arrives), messages for it beyond the bound are dropped
// and said. While a client reads a stream, the agent's next message for
// it waits until the client has taken enough, as a slow editor holds
// back a stdio agent through the pipe; a single message larger than the
// bound still goes, alone. The bound is the connection's, not each
// stream's: an agent with many sessions whose streams nobody opens could
// otherwise make serve hold the bound once per session.
const DefaultStreamBuffer = 64 << 20

// streamBudget is what a connection's streams may hold together, and
// what they hold now.
type streamBudget struct {
	limit int
	held  atomic.Int64
}

func newStreamBudget(limit int) *streamBudget {
	if limit <= 0 {
		limit = DefaultStreamBuffer
	}
	return &streamBudget{limit: limit}
}

// over reports whether n more bytes would take the connection's streams
// past their bound.
func (b *streamBudget) over(n int) bool { return int(b.held.Load())+n > b.limit }

// outStream is one server→client SSE stream of serve: the connection's
// or a session's. Messages queue here until a GET is attached, and while
// it is; the GET handler writes them out one event each.
type outStream struct {
	session  string // the session's id; "" for the connection's stream
	gate     *orderGate
	mu       sync.Mutex
	queue    []queued
	queued   int // bytes in queue, also counted in budget
	budget   *streamBudget
	attached bool
	ending   bool // finish queued the end: the stream closes once it is reached
	closed   bool
	wake     chan struct{} // capacity 1: "the queue changed"
	ended    chan struct{} // closed by close
	// room is signalled when a push waiting for the attached client to
	// catch up may go on: the queue shrank, or the client left.
	room *sync.Cond
}

// queued is one agent message and its place in the agent's output, or,
// with end set, the place where the stream ends.
type queued struct {
	seq uint64
	msg []byte
	end bool
	// settle holds the message until the connection's other streams have
	// been quiet for answerSettle (see there).
	settle bool
}

// answerSettle is how long the answer to a session/load or
// session/resume waits after the last message written on another of the
// connection's streams. The history a load replays goes out on the
// session's stream, the answer on the connection's; the order gate
// writes them in the agent's order, but a client reading the two streams
// over two HTTP/1.1 connections (the TypeScript SDK's) may read the
// answer first and close the session before its history is read. The
// pause gives its reader time; loads are rare, so it costs little.
const answerSettle = 50 * time.Millisecond

func newOutStream(session string, budget *streamBudget, gate *orderGate) *outStream {
	st := &outStream{session: session, gate: gate, budget: budget, wake: make(chan struct{}, 1), ended: make(chan struct{})}
	st.room = sync.NewCond(&st.mu)
	gate.add(st)
	return st
}

// pushResult says what push did with a message.
type pushResult uint8

const (
	pushQueued pushResult = iota
	// pushClosed: the stream has ended (DELETE, teardown) and nobody
	// will read it again; dropping the message is no loss to anyone.
	pushClosed
	// pushFull: nobody has opened the stream and the connection's streams
	// hold their bound; the message is lost and the caller records and
	// says so.
	pushFull
)

// push queues a copy of msg unless the stream is closed or, with no
// client attached, the connection's streams hold their bound. With a
// client attached and the bound reached, it waits for the client to take
// enough of this stream.
func (s *outStream) push(seq uint64, msg []byte) pushResult {
	return s.pushItem(queued{seq: seq, msg: msg})
}

// pushItem queues a copy of q's message, as push does.
func (s *outStream) pushItem(q queued) pushResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := q.msg
	for s.attached && !s.closed && s.over(len(msg)) {
		s.room.Wait()
	}
	if s.closed {
		return pushClosed
	}
	if !s.attached && s.budget.over(len(msg)) {
		return pushFull
	}
	q.msg = append([]byte(nil), msg...)
	s.queue = append(s.queue, q)
	s.queued += len(msg)
	s.budget.held.Add(int64(len(msg)))
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return pushQueued
}

// over reports whether n more bytes for a non-empty queue would take the
// connection's streams past their bound; an empty queue takes any
// message, however large, so an attached stream always moves: the wait
// ends when its own client has taken what it holds, whatever streams
// nobody reads hold meanwhile.
func (s *outStream) over(n int) bool {
	return s.queued > 0 && s.budget.over(n)
}

// releaseLocked gives back what a closed stream that nobody will read
// still holds.
func (s *outStream) releaseLocked() {
	s.budget.held.Add(-int64(s.queued))
	clear(s.queue)
	s.queue, s.queued = nil, 0
}

// attach claims the stream for one GET; a second concurrent GET is
// refused (409), as some servers do.
func (s *outStream) attach() (ok, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, true
	}
	if s.attached {
		return false, false
	}
	s.attached = true
	defer s.gate.broadcast()
	return true, false
}

func (s *outStream) detach() {
	s.mu.Lock()
	s.attached = false
	if s.closed {
		s.releaseLocked()
	}
	ending := s.ending
	s.room.Broadcast() // a waiting push now drops or queues, as for any unopened stream
	s.mu.Unlock()
	if ending {
		s.close() // nobody will write up to the end now
		return
	}
	s.gate.broadcast()
}

// finish ends the stream at seq: an attached GET writes what comes
// before it in the connection's order (the failed session/load answer on
// the connection stream included), then finishes its response. A stream
// nobody has open ends at once.
func (s *outStream) finish(seq uint64) {
	s.mu.Lock()
	if s.closed || !s.attached {
		s.mu.Unlock()
		s.close()
		return
	}
	s.ending = true
	s.queue = append(s.queue, queued{seq: seq, end: true})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	s.gate.broadcast()
}

// peek returns the oldest queued message, or ok false.
func (s *outStream) peek() (q queued, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return queued{}, false
	}
	return s.queue[0], true
}

// head returns the sequence of the oldest message an attached stream
// still has to write, or ok false when it is detached or empty.
func (s *outStream) head() (seq uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.attached || s.closed || len(s.queue) == 0 {
		return 0, false
	}
	return s.queue[0].seq, true
}

// pop drops the message peek returned, once it has been written.
func (s *outStream) pop() {
	s.mu.Lock()
	n := len(s.queue[0].msg)
	s.queued -= n
	s.budget.held.Add(-int64(n))
	s.queue[0] = queued{}
	s.queue = s.queue[1:]
	s.room.Broadcast()
	s.mu.Unlock()
	s.gate.wrote(s)
}

// close ends the stream: an attached GET finishes its response. The
// gate forgets it.
func (s *outStream) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.ended)
	}
	if !s.attached {
		s.releaseLocked()
	}
	s.room.Broadcast()
	s.mu.Unlock()
	s.gate.remove(s)
}

// orderGate keeps a connection's streams in the agent's order: a stream
// writes a message only when no other open stream still has an older
// one to write. Without it a session/load response (connection stream)
// could overtake the history replayed before it (session stream). A
// stream nobody has opened does not hold the others back.
type orderGate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	streams []*outStream
	last    *outStream // the stream that wrote the latest message, and when
	lastAt  time.Time
}

func newOrderGate() *orderGate {
	g := &orderGate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *orderGate) add(st *outStream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.streams = append(g.streams, st)
}

// remove forgets a closed stream and wakes the others.
func (g *orderGate) remove(st *outStream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, s := range g.streams {
		if s == st {
			g.streams = append(g.streams[:i], g.streams[i+1:]...)
			break
		}
	}
	g.cond.Broadcast()
}

// wrote notes that st has written a message, and wakes the others.
func (g *orderGate) wrote(st *outStream) {
	g.mu.Lock()
	g.last, g.lastAt = st, time.Now()
	g.cond.Broadcast()
	g.mu.Unlock()
}

// quietFor returns how much longer self must wait for the other streams
// to have been quiet for d.
func (g *orderGate) quietFor(self *outStream, d time.Duration) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil || g.last == self {
		return 0
	}
	return d - time.Since(g.lastAt)
}

func (g *orderGate) broadcast() {
	g.mu.Lock()
	g.cond.Broadcast()
	g.mu.Unlock()
}

// waitTurn blocks until self may write message seq, or done ends.
func (g *orderGate) waitTurn(self *outStream, seq uint64, done <-chan struct{}) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		select {
		case <-done:
			return false
		case <-self.ended:
			return true // drain what is left without waiting
		default:
		}
		if !g.olderElsewhere(self, seq) {
			return true
		}
		g.cond.Wait()
	}
}

func (g *orderGate) olderElsewhere(self *outStream, seq uint64) bool {
	for _, st := range g.streams {
		if st == self {
			continue
		}
		if head, ok := st.head(); ok && head < seq {
			return true
		}
	}
	return false
}

// sseWriter is what a GET handler needs to write one stream.
type sseWriter struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	keepalive time.Duration
	record    func(msg []byte, id string) // called as each event is written
	// nextID numbers events across all streams of the connection in the
	// order they are written (see HeaderEventOrder).
	nextID func() uint64
}

// settle waits until the connection's other streams have been quiet for
// answerSettle; it reports false when the client left meanwhile.
func (sw *sseWriter) settle(s *outStream, done <-chan struct{}) bool {
	wait := s.gate.quietFor(s, answerSettle)
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ended:
		return true
	case <-done:
		return false
	}
}

// write sends b and flushes it. With keep-alives on, a client that
// takes PeerMissedPings intervals per 64 KiB to take it is gone
// (acphttp.WriteDeadline): the write fails and the stream is free for
// the next GET, where the agent would otherwise wait for good behind a
// client that reads nothing (see DefaultStreamBuffer).
func (sw *sseWriter) write(b []byte) bool {
	if sw.keepalive > 0 {
		_ = sw.rc.SetWriteDeadline(acphttp.WriteDeadline(len(b), sw.keepalive))
	}
	if _, err := sw.w.Write(b); err != nil {
		return false
	}
	return sw.rc.Flush() == nil
}

// HeaderEventOrder, on a GET stream's response, says that the events'
// ids number the messages of all the connection's streams together, in
// the agent's order, without gaps, so a client reading several streams
// can put the agent's messages back in order (a session/load reply after
// the history it replays). acpscope serve sends it; connect uses it.
const HeaderEventOrder = "Acpscope-Event-Order"

// run writes queued messages as SSE events, each flushed at once, and a
// keep-alive comment whenever the stream has been quiet for keepalive.
// It returns when the client leaves (done) or the stream is closed.
func (sw *sseWriter) run(s *outStream, done <-chan struct{}) {
	var tick <-chan time.Time
	if sw.keepalive > 0 {
		t := time.NewTicker(sw.keepalive)
		defer t.Stop()
		tick = t.C
	}
	var buf []byte
	for {
		for q, ok := s.peek(); ok; q, ok = s.peek() {
			if !s.gate.waitTurn(s, q.seq, done) {
				return
			}
			if q.end {
				s.close()
				return
			}
			if q.settle && !sw.settle(s, done) {
				return
			}
			msg := q.msg
			id := strconv.FormatUint(sw.nextID(), 10)
			buf = wire.AppendSSEEvent(buf[:0], id, msg)
			// Recorded before it is sent, so the client's answer is never
			// recorded first. A failed write leaves the message queued for
			// the next GET, where it is recorded again as sent again.
			sw.record(msg, id)
			if !sw.write(buf) {
				return
			}
			s.pop()
		}
		select {
		case <-s.wake:
		case <-tick:
			buf = wire.AppendSSEComment(buf[:0], "keep-alive")
			if !sw.write(buf) {
				return
			}
		case <-done:
			return
		case <-s.ended:
			if _, ok := s.peek(); !ok {
				return
			}
		}
	}
}
