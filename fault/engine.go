package fault

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// DefaultHoldTimeout is how long a held message waits for a person
// before it is forwarded unchanged (--hold-timeout).
const DefaultHoldTimeout = 60 * time.Second

// ReorderWait is the longest a reorder window keeps a message while
// waiting for the window to fill: a peer that waits for an answer before
// it sends more must not stall.
const ReorderWait = 500 * time.Millisecond

// maxPairing bounds the requests remembered per connection to name
// responses by their method.
const maxPairing = 100_000

// Options configure an Engine.
type Options struct {
	// Plan is the fault plan; nil for a run that only intercepts.
	Plan *Plan
	// AllowIntercept lets a control client hold messages.
	AllowIntercept bool
	// HoldTimeout bounds a hold (default DefaultHoldTimeout).
	HoldTimeout time.Duration
	// Warn hears of holds that timed out and similar; nil discards.
	Warn func(string)
}

// Engine is the tap.Interceptor of a run: it applies the plan, holds
// what a person asked to hold, and delivers what is sent by hand.
type Engine struct {
	opts  Options
	rules []*ruleState
	ids   atomic.Uint64
	done  chan struct{} // closed by Close: delays and holds end
	once  sync.Once
	holds *holds

	mu    sync.Mutex // rule counters and generators; conns
	conns map[uint32]*conn
}

// ruleState is a rule and what the run did with it so far.
type ruleState struct {
	*Rule
	index            int
	matched, applied int
	rng              [2]*rand.Rand // per direction, so one does not move the other
}

// New returns an engine for opts.
func New(opts Options) *Engine {
	if opts.HoldTimeout <= 0 {
		opts.HoldTimeout = DefaultHoldTimeout
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	e := &Engine{opts: opts, done: make(chan struct{}), conns: map[uint32]*conn{}}
	e.holds = newHolds(e)
	if opts.Plan != nil {
		for i, r := range opts.Plan.Rules {
			rs := &ruleState{Rule: r, index: i}
			for d := range rs.rng {
				s := uint64(opts.Plan.Seed)
				rs.rng[d] = rand.New(rand.NewPCG(s, uint64(i)<<8|uint64(d)))
			}
			e.rules = append(e.rules, rs)
		}
	}
	return e
}

// Close ends every delay and hold (held messages are forwarded as they
// arrived) and stops reorder timers. It is idempotent.
func (e *Engine) Close() {
	e.once.Do(func() { close(e.done) })
}

// Open implements tap.Interceptor.
func (e *Engine) Open(id uint32, port tap.Port) tap.Conn {
	c := &conn{e: e, id: id, port: port, pairer: wire.NewPairer[asked]()}
	for i := range c.dirs {
		c.dirs[i] = &dirState{}
	}
	e.mu.Lock()
	e.conns[id] = c
	e.mu.Unlock()
	return c
}

// Send delivers msg by hand on connection connID in direction dir (to the
// agent: wire.DirClient), recorded as sent. Connection 0 (stdio's, and
// what send asks for unless told) means the run's only connection when
// it has just one.
func (e *Engine) Send(connID uint32, dir wire.Dir, msg []byte) (uint64, error) {
	c, err := e.connFor(connID)
	if err != nil {
		return 0, err
	}
	id := e.ids.Add(1)
	f := &protocol.Fault{ID: id, Action: protocol.ActionSend, Stage: protocol.StageInjected, By: protocol.BySend}
	return id, c.port.Deliver(dir, msg, f)
}

// connFor finds the open connection a Send names.
func (e *Engine) connFor(id uint32) (*conn, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c := e.conns[id]; c != nil {
		return c, nil
	}
	var open []uint32
	for n := range e.conns {
		open = append(open, n)
	}
	slices.Sort(open)
	switch {
	case len(open) == 1 && id == 0:
		return e.conns[open[0]], nil
	case len(open) == 0:
		return nil, fmt.Errorf("no connection is open in this run")
	}
	return nil, fmt.Errorf("no connection %d in this run; open: %v (pick one with --conn)", id, open[:min(len(open), 20)])
}

// closed forgets a connection whose directions have both ended.
func (e *Engine) closed(c *conn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conns[c.id] == c {
		delete(e.conns, c.id)
	}
}

// pick finds the rule that acts on rec travelling in dir and draws its
// random choices, all under the engine's lock so counts and draws follow
// the order messages arrive in.
func (e *Engine) pick(dir wire.Dir, rec *capture.Record) *decision {
	if len(e.rules) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.rules {
		if !r.Match.Match(rec, nil) {
			continue
		}
		r.matched++
		if r.matched <= r.After || r.Times > 0 && r.applied >= r.Times {
			continue
		}
		rng := r.rng[dirIndex(dir)]
		if r.Probability > 0 && rng.Float64() >= r.Probability {
			continue
		}
		r.applied++
		d := &decision{rule: r, delay: r.Delay.Min, rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))}
		if r.Delay.Max > 0 {
			d.delay += time.Duration(rng.Int64N(int64(r.Delay.Max - r.Delay.Min + 1)))
		}
		return d
	}
	return nil
}

// decision is what a rule does to one message.
type decision struct {
	rule  *ruleState
	delay time.Duration
	rng   *rand.Rand // for this message's corruption and its window's shuffle
}

// Counts returns, for each rule, how many messages it matched and acted on.
func (e *Engine) Counts() (matched, applied []int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.rules {
		matched = append(matched, r.matched)
		applied = append(applied, r.applied)
	}
	return matched, applied
}

func dirIndex(d wire.Dir) int {
	if d == wire.DirAgent {
		return 1
	}
	return 0
}

// sleep waits d unless the engine closes first.
func (e *Engine) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.done:
	}
}

func delayNote(d time.Duration) string { return "delayed " + human.Duration(d) }
