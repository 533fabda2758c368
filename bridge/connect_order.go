package bridge

import (
	"sync"
	"time"

	acp "github.com/acpscope/acpscope/protocol" // the test files declare a type named protocol
	"github.com/acpscope/acpscope/wire"
)

// orderGapWait is how long connect holds an event whose predecessor has
// not arrived before it gives up waiting (the server lost that event).
const orderGapWait = 250 * time.Millisecond

// sequencer puts events from several SSE streams back into the order
// their ids give (see HeaderEventOrder): an event is delivered once all
// lower ids have been. Events whose ids are already passed are delivered
// at once.
type sequencer struct {
	mu      sync.Mutex
	next    uint64
	held    map[uint64][]byte
	deliver func([]byte) error
	fail    func(error)
	timer   *time.Timer
}

func newSequencer(deliver func([]byte) error, fail func(error)) *sequencer {
	return &sequencer{next: 1, held: map[uint64][]byte{}, deliver: deliver, fail: fail}
}

// push hands over event id; data is copied.
func (s *sequencer) push(id uint64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < s.next {
		return s.deliver(data)
	}
	s.held[id] = append([]byte(nil), data...)
	return s.flushLocked()
}

// flushLocked delivers the run of held events that starts at next, and
// arms the gap timer when some remain.
func (s *sequencer) flushLocked() error {
	for {
		d, ok := s.held[s.next]
		if !ok {
			break
		}
		delete(s.held, s.next)
		s.next++
		if err := s.deliver(d); err != nil {
			return err
		}
	}
	if len(s.held) > 0 && s.timer == nil {
		s.timer = time.AfterFunc(orderGapWait, s.skipGap) // gap timer: fires once
	}
	return nil
}

// skipGap gives up on a missing event and delivers what follows it.
func (s *sequencer) skipGap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if len(s.held) == 0 {
		return
	}
	lowest := uint64(0)
	for id := range s.held {
		if lowest == 0 || id < lowest {
			lowest = id
		}
	}
	s.next = lowest
	if err := s.flushLocked(); err != nil {
		s.fail(err)
	}
}

// stop disarms the gap timer.
func (s *sequencer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// Servers that do not number their events (HeaderEventOrder) give connect
// no way to know whether a session/load answer on the connection stream
// overtook the history on the session's stream: each stream has its own
// reader, over HTTP/1.1 its own TCP connection. The server writes the
// history first, so connect holds such an answer until the session's
// stream has been quiet for answerQuiet, waiting answerQuietMax at most.
const (
	answerQuiet    = 50 * time.Millisecond
	answerQuietMax = time.Second
)

// holdLoadAnswer delays an unnumbered message from the connection stream
// that answers a session/load or session/resume whose session stream is
// open, until that stream has been quiet (see answerQuiet).
func (h *httpLink) holdLoadAnswer(msg []byte) {
	m := wire.Classify(msg)
	if m.Kind != wire.KindResponse && m.Kind != wire.KindError {
		return
	}
	h.mu.Lock()
	req, ok := h.reqs[string(m.ID)]
	open := ok && h.open[req.sessionID]
	h.mu.Unlock()
	if !open || !acp.ResumesSession(req.method) {
		return
	}
	arrived := time.Now()
	deadline := arrived.Add(answerQuietMax)
	for {
		h.mu.Lock()
		since := h.lastEvent[req.sessionID]
		h.mu.Unlock()
		if since.Before(arrived) {
			since = arrived
		}
		wait := answerQuiet - time.Since(since)
		if wait <= 0 || time.Now().After(deadline) {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-h.ctx.Done():
			t.Stop()
			return
		}
	}
}
