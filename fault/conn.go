package fault

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// conn is one intercepted connection.
type conn struct {
	e    *Engine
	id   uint32
	port tap.Port
	dirs [2]*dirState

	pairMu  sync.Mutex
	pairer  *wire.Pairer[asked] // requests by id, to name responses
	waiting int

	ended atomic.Uint32 // a bit per direction ended; at both the engine forgets c
}

// dirState is one direction of a connection: its lock is held while a
// message of that direction is handled, so messages leave in order.
type dirState struct {
	mu      sync.Mutex
	windows []*window // open reorder windows
}

// Message implements tap.Conn.
func (c *conn) Message(dir wire.Dir, t int64, msg []byte) error {
	rec := c.classify(dir, msg)
	d := c.dirs[dirIndex(dir)]
	d.mu.Lock()
	defer d.mu.Unlock()
	if handled, err := c.e.holds.hold(c, dir, t, msg, rec); handled {
		return err
	}
	dec := c.e.pick(dir, rec)
	if dec == nil || dec.rule.Reorder == 0 {
		c.flushWindows(d, dir, nil)
	}
	if dec == nil {
		return c.port.Deliver(dir, msg, nil)
	}
	return c.apply(d, dir, t, msg, rec, dec)
}

// End implements tap.Conn.
func (c *conn) End(dir wire.Dir) {
	d := c.dirs[dirIndex(dir)]
	d.mu.Lock()
	defer d.mu.Unlock()
	c.flushWindows(d, dir, nil)
	if c.ended.Or(1<<dirIndex(dir))|1<<dirIndex(dir) == 3 {
		c.e.closed(c)
	}
}

// classify reads what the filter needs; a response gets the method of
// the request it answers, as in the capture.
func (c *conn) classify(dir wire.Dir, msg []byte) *capture.Record {
	m := wire.Classify(msg)
	r := &capture.Record{Msg: protocol.Msg{Dir: dir, Kind: m.Kind, Flags: m.Flags, ID: m.ID, Method: m.Method,
		Session: m.SessionID, Conn: c.id, Body: msg}, ErrorCode: m.ErrorCode, Size: int64(len(msg))}
	if protocol.IsSuccessor(r.Method) {
		protocol.Resolve(&r.Msg)
	}
	c.pairMu.Lock()
	defer c.pairMu.Unlock()
	switch r.Kind {
	case wire.KindRequest:
		if c.waiting >= maxPairing {
			c.pairer, c.waiting = wire.NewPairer[asked](), 0
		}
		if _, dup := c.pairer.Request(dir, r.ID, asked{r.Method, r.Session}); !dup {
			c.waiting++
		}
	case wire.KindResponse, wire.KindError:
		if req, ok := c.pairer.Response(dir, r.ID); ok {
			c.waiting--
			r.Method = req.method
			r.Session = protocol.ResponseSession(req.method, req.session, m.Result)
		}
	}
	return r
}

// asked is what a connection remembers of a request until its answer.
type asked struct{ method, session string }

// fault makes the record of one step of an alteration.
func (c *conn) fault(id uint64, dec *decision, action, stage string, arrived int64, notes ...string) *protocol.Fault {
	return &protocol.Fault{ID: id, Action: action, Stage: stage, Rule: dec.rule.Name, By: protocol.ByPlan,
		Arrived: arrived, Note: strings.Join(nonEmpty(notes), "; ")}
}

func nonEmpty(s []string) []string {
	out := s[:0:0]
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// apply carries out dec on one message.
func (c *conn) apply(d *dirState, dir wire.Dir, t int64, msg []byte, rec *capture.Record, dec *decision) error {
	r := dec.rule
	id := c.e.ids.Add(1)
	var err error
	switch {
	case r.Drop:
		c.port.Record(dir, t, msg, c.fault(id, dec, protocol.ActionDrop, protocol.StageDropped, t))
	case r.Answer != nil && rec.Kind == wire.KindRequest:
		c.port.Record(dir, t, msg, c.fault(id, dec, protocol.ActionAnswer, protocol.StageDropped, t, "answered by acpscope"))
		_ = c.port.Deliver(dir.Reverse(), answerFor(r.Answer, rec), c.fault(id, dec, protocol.ActionAnswer, protocol.StageInjected, t))
	default:
		err = c.forward(d, dir, t, msg, rec, dec, id)
	}
	for _, in := range r.Inject {
		_ = c.port.Deliver(in.Dir, expand(in.Msg, rec), c.fault(c.e.ids.Add(1), dec, protocol.ActionInject, protocol.StageInjected, 0, "after "+describe(rec)))
	}
	if r.Kill {
		c.port.Kill()
	}
	if r.Close {
		c.port.Close()
	}
	return err
}

// forward delivers a message the rule lets through: changed, late, held
// for reordering or repeated.
func (c *conn) forward(d *dirState, dir wire.Dir, t int64, msg []byte, rec *capture.Record, dec *decision, id uint64) error {
	r := dec.rule
	out, notes := msg, []string(nil)
	action := primaryAction(r.Rule)
	if r.changesBody() {
		out, notes = change(r.Rule, rec, msg, dec.rng)
	}
	changed := string(out) != string(msg)
	if changed {
		c.port.Record(dir, t, msg, c.fault(id, dec, action, protocol.StageReplaced, t, notes...))
	}
	if dec.delay > 0 {
		c.e.sleep(dec.delay)
		notes = append(notes, delayNote(dec.delay))
	}
	if r.Reorder > 0 {
		c.enqueue(d, dir, dec, pendingMsg{body: bytes.Clone(out), arrived: t, id: id, action: action, notes: notes})
		return nil
	}
	var f *protocol.Fault
	if r.changesBody() && !changed {
		notes = append(notes, "the change left the bytes as they were")
	}
	if r.changesBody() || dec.delay > 0 || r.Dup > 0 || r.Close || r.Kill {
		f = c.fault(id, dec, action, protocol.StageForwarded, t, notes...)
		if !changed && dec.delay == 0 && r.Dup == 0 {
			f.Note = strings.Join(nonEmpty(append(notes, action+" after it")), "; ")
		}
	}
	err := c.port.Deliver(dir, out, f)
	for i := range r.Dup {
		_ = c.port.Deliver(dir, out, c.fault(id, dec, protocol.ActionDuplicate, protocol.StageInjected, t, fmt.Sprintf("copy %d of %d", i+1, r.Dup)))
	}
	return err
}

// primaryAction names what the rule mainly does, for the record.
func primaryAction(r *Rule) string {
	switch {
	case r.Replace != nil:
		return protocol.ActionReplace
	case len(r.Rewrite) > 0 || r.Pad != nil:
		return protocol.ActionRewrite
	case r.Truncate > 0:
		return protocol.ActionTruncate
	case r.Corrupt > 0:
		return protocol.ActionCorrupt
	case !r.Delay.zero():
		return protocol.ActionDelay
	case r.Reorder > 0:
		return protocol.ActionReorder
	case r.Dup > 0:
		return protocol.ActionDuplicate
	case r.Kill:
		return protocol.ActionKill
	case r.Close:
		return protocol.ActionClose
	}
	return protocol.ActionInject
}

// describe names a message for notes: "session/prompt request id 3".
func describe(rec *capture.Record) string {
	s := rec.Kind.String()
	if rec.Method != "" {
		s = rec.Method + " " + s
	}
	if rec.ID != nil {
		s += " id " + string(rec.ID)
	}
	return s
}

// pendingMsg is a message waiting in a reorder window.
type pendingMsg struct {
	body    []byte
	arrived int64
	id      uint64
	action  string
	notes   []string
}

// window is one rule's reorder window in one direction.
type window struct {
	dec   *decision // of the message that opened it: its generator shuffles
	msgs  []pendingMsg
	timer *time.Timer
}

// enqueue adds m to the rule's window, delivering the window when full.
func (c *conn) enqueue(d *dirState, dir wire.Dir, dec *decision, m pendingMsg) {
	var w *window
	for _, x := range d.windows {
		if x.dec.rule == dec.rule {
			w = x
		}
	}
	c.flushWindows(d, dir, w)
	if w == nil {
		w = &window{dec: dec}
		d.windows = append(d.windows, w)
		// The window's timer: delivers it if it does not fill in time.
		w.timer = time.AfterFunc(ReorderWait, func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			c.flushWindow(d, dir, w)
		})
	}
	w.msgs = append(w.msgs, m)
	if len(w.msgs) >= dec.rule.Reorder {
		c.flushWindow(d, dir, w)
	}
}

// flushWindows delivers every open window of the direction but keep.
func (c *conn) flushWindows(d *dirState, dir wire.Dir, keep *window) {
	for _, w := range append([]*window(nil), d.windows...) {
		if w != keep {
			c.flushWindow(d, dir, w)
		}
	}
}

// flushWindow delivers w's messages shuffled and closes it. The caller
// holds d.mu; a window already flushed is left alone.
func (c *conn) flushWindow(d *dirState, dir wire.Dir, w *window) {
	i := indexOf(d.windows, w)
	if i < 0 {
		return
	}
	d.windows = append(d.windows[:i], d.windows[i+1:]...)
	w.timer.Stop()
	order := w.dec.rng.Perm(len(w.msgs))
	for pos, k := range order {
		m := w.msgs[k]
		note := fmt.Sprintf("sent %d of %d, arrived %d of %d", pos+1, len(order), k+1, len(order))
		f := c.fault(m.id, w.dec, m.action, protocol.StageForwarded, m.arrived, append(m.notes, note)...)
		_ = c.port.Deliver(dir, m.body, f)
	}
}

func indexOf(ws []*window, w *window) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}
