package proxy

import (
	"sync"
	"time"
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
