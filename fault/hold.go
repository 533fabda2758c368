package fault

import (
	"fmt"
	"sync"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// holds is the intercept state: which messages a person asked to hold
// (a filter set by one control client, the owner) and those held now.
// A held message blocks only its direction of its connection; it is
// released by the owner's verdict, its timeout, the owner going away or
// the engine closing, whichever comes first.
type holds struct {
	e      *Engine
	mu     sync.Mutex
	filter *capture.Filter // nil: hold nothing
	owner  *client
	held   map[uint64]*held
}

// held is one message waiting for a verdict.
type held struct {
	id      uint64
	conn    uint32
	dir     wire.Dir
	arrived int64
	msg     []byte
	verdict chan verdict // buffered: the first verdict wins
	decided bool         // a verdict was given; guarded by holds.mu
}

// verdict is what a person decided: forward (Msg nil: unchanged), edit
// (forward Msg instead) or drop.
type verdict struct {
	action string
	msg    []byte
	note   string
}

// The verdicts a control client can give a held message.
const (
	VerdictForward = "forward"
	VerdictEdit    = "edit"
	VerdictDrop    = "drop"
)

func newHolds(e *Engine) *holds { return &holds{e: e, held: map[uint64]*held{}} }

// setFilter starts holding what f matches (nil: stop holding) for owner.
func (h *holds) setFilter(owner *client, f *capture.Filter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.owner, h.filter = owner, f
	if f == nil {
		h.owner = nil
	}
}

// ownerGone stops holding for a client that went away and releases what
// it held unchanged: closing the inspector must never leave traffic stuck.
func (h *holds) ownerGone(c *client) {
	h.mu.Lock()
	if h.owner != c {
		h.mu.Unlock()
		return
	}
	h.owner, h.filter = nil, nil
	h.mu.Unlock()
	h.releaseAll("the intercepting client went away")
}

// releaseAll forwards every held message unchanged.
func (h *holds) releaseAll(note string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.held {
		if !m.decided {
			m.give(verdict{action: VerdictForward, note: note})
			n++
		}
	}
	return n
}

// release gives held message id its verdict.
func (h *holds) release(id uint64, v verdict) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.held[id]
	if m == nil || m.decided {
		return fmt.Errorf("no message %d is held (released already, or timed out)", id)
	}
	m.give(v)
	return nil
}

// give hands m its verdict; the caller holds h.mu. The message stays in
// the table until its reader carries the verdict out, so decided is what
// refuses a second verdict in between.
func (m *held) give(v verdict) {
	m.decided = true
	select {
	case m.verdict <- v:
	default: // a verdict is already on its way
	}
}

// list returns what is held now.
func (h *holds) list() []*held {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*held, 0, len(h.held))
	for _, m := range h.held {
		if !m.decided {
			out = append(out, m)
		}
	}
	return out
}

// hold holds msg if the filter asks for it, waits for its verdict and
// carries it out. It reports whether it handled the message.
func (h *holds) hold(c *conn, dir wire.Dir, t int64, msg []byte, rec *capture.Record) (bool, error) {
	h.mu.Lock()
	if h.filter == nil || !h.filter.Match(rec, nil) {
		h.mu.Unlock()
		return false, nil
	}
	m := &held{id: h.e.ids.Add(1), conn: c.id, dir: dir, arrived: t, msg: append([]byte(nil), msg...), verdict: make(chan verdict, 1)}
	h.held[m.id] = m
	owner := h.owner
	h.mu.Unlock()
	owner.notify(event{Event: "held", Held: m.view()})

	v := h.wait(m)
	h.mu.Lock()
	delete(h.held, m.id)
	h.mu.Unlock()
	owner.notify(event{Event: "released", ID: m.id, How: v.action, Note: v.note})
	return true, c.carryOut(m, v)
}

// wait returns the held message's verdict, or forward-unchanged when it
// times out or the engine closes.
func (h *holds) wait(m *held) verdict {
	t := time.NewTimer(h.e.opts.HoldTimeout)
	defer t.Stop()
	select {
	case v := <-m.verdict:
		return v
	case <-t.C:
		note := "hold timed out after " + human.Duration(h.e.opts.HoldTimeout) + ": forwarded unchanged"
		h.e.opts.Warn(fmt.Sprintf("held message %d (%s) %s", m.id, m.dir, note))
		return verdict{action: VerdictForward, note: note}
	case <-h.e.done:
		return verdict{action: VerdictForward, note: "the run ended: forwarded unchanged"}
	}
}

// carryOut delivers or drops a held message as decided, and records it.
func (c *conn) carryOut(m *held, v verdict) error {
	now := time.Now().UnixNano()
	held := "held " + human.Duration(time.Duration(now-m.arrived))
	f := func(action, stage string) *protocol.Fault {
		note := held
		if v.note != "" {
			note += "; " + v.note
		}
		return &protocol.Fault{ID: m.id, Action: action, Stage: stage, By: protocol.ByIntercept, Arrived: m.arrived, Note: note}
	}
	switch {
	case v.action == VerdictDrop:
		c.port.Record(m.dir, now, m.msg, f(protocol.ActionDrop, protocol.StageDropped))
		return nil
	case v.action == VerdictEdit && string(v.msg) != string(m.msg):
		c.port.Record(m.dir, m.arrived, m.msg, f(protocol.ActionEdit, protocol.StageReplaced))
		return c.port.Deliver(m.dir, v.msg, f(protocol.ActionEdit, protocol.StageForwarded))
	}
	return c.port.Deliver(m.dir, m.msg, f(protocol.ActionHold, protocol.StageForwarded))
}
