package proxy

import (
	"net/http"
	"sync"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// DefaultStreamBuffer bounds the bytes held for a stream no client has
// opened yet (a session's updates sent before its GET arrives).
const DefaultStreamBuffer = 64 << 20

// outStream is one server→client SSE stream of serve: the connection's
// or a session's. Messages queue here until a GET is attached, and while
// it is; the GET handler writes them out one event each.
type outStream struct {
	mu       sync.Mutex
	queue    [][]byte
	queued   int
	limit    int
	attached bool
	closed   bool
	wake     chan struct{} // capacity 1: "the queue changed"
	ended    chan struct{} // closed by close
}

func newOutStream(limit int) *outStream {
	if limit <= 0 {
		limit = DefaultStreamBuffer
	}
	return &outStream{limit: limit, wake: make(chan struct{}, 1), ended: make(chan struct{})}
}

// push queues a copy of msg. It reports false when the stream is closed
// or, with no client attached, its buffer is full: the message is lost
// and the caller says so.
func (s *outStream) push(msg []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || (!s.attached && s.queued+len(msg) > s.limit) {
		return false
	}
	s.queue = append(s.queue, append([]byte(nil), msg...))
	s.queued += len(msg)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
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
	return true, false
}

func (s *outStream) detach() {
	s.mu.Lock()
	s.attached = false
	s.mu.Unlock()
}

// peek returns the oldest queued message, or nil.
func (s *outStream) peek() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return nil
	}
	return s.queue[0]
}

// pop drops the message peek returned, once it has been written.
func (s *outStream) pop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued -= len(s.queue[0])
	s.queue[0] = nil
	s.queue = s.queue[1:]
}

// close ends the stream: an attached GET finishes its response.
func (s *outStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ended)
	}
}

// sseWriter is what a GET handler needs to write one stream.
type sseWriter struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	keepalive time.Duration
	record    func(msg []byte) // called after each event is written
}

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
		for msg := s.peek(); msg != nil; msg = s.peek() {
			buf = wire.AppendSSEEvent(buf[:0], "", msg)
			if _, err := sw.w.Write(buf); err != nil {
				return
			}
			if sw.rc.Flush() != nil {
				return
			}
			s.pop()
			sw.record(msg)
		}
		select {
		case <-s.wake:
		case <-tick:
			buf = wire.AppendSSEComment(buf[:0], "keep-alive")
			if _, err := sw.w.Write(buf); err != nil || sw.rc.Flush() != nil {
				return
			}
		case <-done:
			return
		case <-s.ended:
			if s.peek() == nil {
				return
			}
		}
	}
}
