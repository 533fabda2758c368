package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// ClientOptions tune RunClient.
type ClientOptions struct {
	// Ignore lists path globs the comparison skips (DefaultIgnore plus
	// --ignore); Strict compares chunk runs chunk by chunk.
	Ignore Ignore
	Strict bool
	// Timeout bounds each wait for the agent (default 30 s).
	Timeout time.Duration
	// Settle is how long the agent may stay quiet before a notification
	// or the end of the replay goes ahead without the messages the
	// recording had there (default 1 s).
	Settle time.Duration
	// Log receives progress and reports (stderr); nil discards.
	Log io.Writer
	// Tap sees every line sent and received.
	Tap Tap
	// PeerExit, when set, is asked once the agent's output ends or its
	// input breaks before the replay is over; it describes how the agent
	// ended ("exited (status 1)"), or returns "" when it does not know.
	PeerExit func() string
}

// Result is what a replay found.
type Result struct {
	Entries  []Entry
	Sent     int      // client messages sent
	Received int      // agent messages received
	Answered int      // agent requests answered from the recording
	Notes    []string // answers from a nearest match, timeouts, skipped sends
	Bindings []Binding
}

// Match reports whether the replay matched the recording.
func (r *Result) Match() bool { return Mismatches(r.Entries) == 0 && len(r.Notes) == 0 }

// clientRun is the state of one replay as client; one goroutine owns it.
type clientRun struct {
	opts   ClientOptions
	rec    []protocol.Msg // the recording
	peer   []int          // protocol.Pair of rec
	p      *peer
	binder *Binder
	res    Result
	// answered marks the request ids we sent that the agent answered.
	answered map[string]bool
	// responses indexes the recorded agent responses by id (built lazily).
	responses map[string]int
	// usedAgentReq marks recorded agent requests already answered.
	usedAgentReq map[int]bool
	// cursors per notification key, for positional learning.
	notifCursor map[string]int
	agentSeen   int  // live agent messages so far
	lastSent    int  // index in rec of the last client message sent, -1 before
	stalled     bool // a wait for an answer timed out: the replay stops sending
	// scanned is how far waitBefore has checked the recording, and
	// wantCount how many agent messages lie before that point.
	scanned, wantCount int
	lastRecv           time.Time
	eof                bool
	// inputGone: a write to the agent failed, it reads no more.
	inputGone bool
}

// RunClient replays the client side of rec (protocol messages, as from
// Load) to an agent reading agentIn and writing agentOut, then compares
// what the agent sent with what the recording holds. It closes agentIn
// when done. The caller stops the agent; RunClient returns once agentOut
// has ended or, after closing agentIn, Settle has passed.
func RunClient(ctx context.Context, rec []protocol.Msg, agentOut io.Reader, agentIn io.WriteCloser, opts ClientOptions) (*Result, error) {
	rec = Protocol(rec)
	if len(rec) == 0 {
		return nil, ErrNoMessages
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Settle <= 0 {
		opts.Settle = time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	c := &clientRun{
		opts: opts, rec: rec, peer: protocol.Pair(rec), binder: NewBinder(),
		p:        newPeer(agentOut, agentIn, wire.DirAgent, opts.Tap),
		answered: map[string]bool{}, usedAgentReq: map[int]bool{}, notifCursor: map[string]int{},
		lastRecv: time.Now(), lastSent: -1,
	}
	defer c.p.close()
	err := c.run(ctx)
	agentIn.Close()
	c.drain(ctx)
	if err != nil {
		return &c.res, err
	}
	c.compare()
	return &c.res, nil
}

func (c *clientRun) run(ctx context.Context) error {
	for i := range c.rec {
		m := &c.rec[i]
		if m.Dir != wire.DirClient || m.Kind.IsResponse() {
			continue // the agent's part, and answers we give when asked
		}
		if err := c.waitBefore(ctx, i, m.Kind == wire.KindNotification); err != nil {
			return err
		}
		if c.eof || c.inputGone {
			return c.gone(ctx, m, i)
		}
		if c.stalled {
			c.note("the agent stopped answering; %s not sent", Count(c.remainingSends(i), "recorded client message was", "recorded client messages were"))
			return nil
		}
		body := c.binder.Apply(m.Body)
		if err := c.p.send(body); err != nil {
			if !errors.Is(err, errInputGone) {
				return err
			}
			c.inputGone = true
			return c.gone(ctx, m, i)
		}
		c.res.Sent++
		c.lastSent = i
		fmt.Fprintf(c.opts.Log, "replay: → %s %s (sent %d, received %d)\n", m.Kind, m.Method, c.res.Sent, c.res.Received)
	}
	// The end: every request answered, then the trailing notifications.
	if c.stalled {
		return nil
	}
	if err := c.waitBefore(ctx, len(c.rec), true); err != nil {
		return err
	}
	if (c.eof || c.inputGone) && c.awaited(nil) != nil {
		return c.gone(ctx, nil, len(c.rec))
	}
	return nil
}

// gone ends the replay when the agent went away before it should have:
// the recording's message i (m, nil at the end) was next. It reads what the agent sent
// before it went, then says how the agent ended and what the replay was
// waiting for: an error when the agent answered nothing (nothing can be
// compared), else a note beside the comparison.
func (c *clientRun) gone(ctx context.Context, m *protocol.Msg, i int) error {
	_ = c.waitFor(ctx, func() bool { return c.eof }, c.opts.Settle)
	who := "the agent closed its output"
	if c.inputGone && !c.eof {
		who = "the agent stopped reading its input"
	}
	if c.opts.PeerExit != nil {
		if how := c.opts.PeerExit(); how != "" {
			who = "the agent " + how
		}
	}
	why := who + " before "
	switch req := c.awaited(m); {
	case req != nil:
		why += fmt.Sprintf("answering %s [%s]", req.Method, req.ID)
	case m != nil:
		why += "replay sent " + m.Method
	default: // the last answer came while we waited for the agent to finish
		why += "the replay's end"
	}
	if c.res.Received == 0 {
		return &GoneError{Why: why}
	}
	if m == nil {
		c.note("%s", why)
		return nil
	}
	c.note("%s; %s not sent", why, Count(c.remainingSends(i), "recorded client message was", "recorded client messages were"))
	return nil
}

// awaited is the first request the agent has not answered: one already
// sent, else next, the one the replay was about to send.
func (c *clientRun) awaited(next *protocol.Msg) *protocol.Msg {
	for i := 0; i <= c.lastSent && i < len(c.rec); i++ {
		if m := &c.rec[i]; m.Dir == wire.DirClient && m.Kind == wire.KindRequest && !c.answered[string(m.ID)] {
			return m
		}
	}
	if next != nil && next.Kind == wire.KindRequest {
		return next
	}
	return nil
}

func (c *clientRun) remainingSends(from int) int {
	n := 0
	for _, m := range c.rec[from:] {
		if m.Dir == wire.DirClient && !m.Kind.IsResponse() {
			n++
		}
	}
	return n
}

// waitBefore waits until the agent has caught up with the recording at
// position i: every response recorded before i has arrived (hard, up to
// Timeout), and, when positional (a notification such as session/cancel,
// or the end), as many agent messages as were recorded before i (soft:
// until the agent has been quiet for Settle).
func (c *clientRun) waitBefore(ctx context.Context, i int, positional bool) error {
	for ; c.scanned < i; c.scanned++ {
		m := &c.rec[c.scanned]
		if m.Dir != wire.DirAgent {
			continue
		}
		c.wantCount++
		if j := c.peer[c.scanned]; m.Kind.IsResponse() && j >= 0 && !c.answered[string(c.rec[j].ID)] {
			req := &c.rec[j]
			if err := c.waitFor(ctx, func() bool { return c.answered[string(req.ID)] }, c.opts.Timeout); err != nil {
				if err != ErrTimeout {
					return err
				}
				c.note("timed out after %s waiting for the answer to %s [%s] (recorded #%d)", c.opts.Timeout, req.Method, req.ID, req.Seq)
				c.stalled = true
				return nil
			}
		}
	}
	// Soft wait: position relative to what the agent sends.
	wantCount := c.wantCount
	for positional && c.agentSeen < wantCount && !c.eof {
		quietFor := time.Since(c.lastRecv)
		if quietFor >= c.opts.Settle {
			break
		}
		if err := c.waitFor(ctx, func() bool { return c.agentSeen >= wantCount }, c.opts.Settle-quietFor); err != nil && err != ErrTimeout {
			return err
		}
	}
	return nil
}

// waitFor handles incoming messages until cond holds, the agent's output
// ends (cond is checked, no error), or d passes (ErrTimeout).
func (c *clientRun) waitFor(ctx context.Context, cond func() bool, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for !cond() {
		if c.eof {
			return nil
		}
		select {
		case m, ok := <-c.p.in:
			if !ok {
				c.eof = true
				continue
			}
			if err := c.handle(&m); err != nil {
				if !errors.Is(err, errInputGone) {
					return err
				}
				c.inputGone = true // keep reading what it said before it went
			}
		case <-timer.C:
			return ErrTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// handle takes one live agent message: keep it, answer it if it is a
// request, and learn identifiers from it.
func (c *clientRun) handle(m *protocol.Msg) error {
	c.p.live = append(c.p.live, *m)
	c.res.Received++
	c.agentSeen++
	c.lastRecv = time.Now()
	switch {
	case m.Kind.IsResponse():
		c.answered[string(m.ID)] = true
		if r := c.recordedResponse(m.ID); r != nil {
			c.learn(r.Body, m.Body)
		}
	case m.Kind == wire.KindRequest:
		return c.answer(m)
	case m.Kind == wire.KindNotification:
		c.learnPositional(m)
	}
	return nil
}

// recordedResponse finds the recorded agent response to our request id.
func (c *clientRun) recordedResponse(id []byte) *protocol.Msg {
	if c.responses == nil {
		c.responses = map[string]int{}
		for i := range c.rec {
			if r := &c.rec[i]; r.Dir == wire.DirAgent && r.Kind.IsResponse() {
				if _, dup := c.responses[string(r.ID)]; !dup {
					c.responses[string(r.ID)] = i
				}
			}
		}
	}
	if i, ok := c.responses[string(id)]; ok {
		return &c.rec[i]
	}
	return nil
}

func (c *clientRun) learn(recorded, live []byte) {
	for _, b := range c.binder.Learn(recorded, live) {
		c.res.Bindings = append(c.res.Bindings, b)
		fmt.Fprintf(c.opts.Log, "replay: rebinding %s %q → %q\n", b.Path, b.Old, b.New)
	}
}

// learnPositional pairs the n-th live notification of a kind with the
// n-th recorded one of the same session within the current turn (tool
// calls mint toolCallIds the client may quote). The window keeps an agent
// that sends more or fewer notifications from being paired across turns,
// and session ids are only ever learned from responses.
func (c *clientRun) learnPositional(m *protocol.Msg) {
	sub, _ := protocol.UpdateOf(m)
	key := m.Method + " " + sub
	for i := max(c.notifCursor[key], c.lastSent+1); i < len(c.rec); i++ {
		r := &c.rec[i]
		if r.Dir == wire.DirClient && r.Kind == wire.KindRequest {
			return // the next turn: nothing of this one left to pair with
		}
		if r.Dir != wire.DirAgent || r.Kind != wire.KindNotification || r.Method != m.Method {
			continue
		}
		if rs, _ := protocol.UpdateOf(r); rs != sub || c.binder.Map(r.Session) != m.Session {
			continue
		}
		c.notifCursor[key] = i + 1
		for _, b := range c.binder.LearnIf(r.Body, m.Body, notSessionID) {
			c.res.Bindings = append(c.res.Bindings, b)
			fmt.Fprintf(c.opts.Log, "replay: rebinding %s %q → %q\n", b.Path, b.Old, b.New)
		}
		return
	}
}

func notSessionID(path string) bool {
	return path != "sessionId" && !strings.HasSuffix(path, ".sessionId")
}

// answer replies to a live agent request from the recording: the
// recorded client answer to the closest recorded request of that method.
func (c *clientRun) answer(m *protocol.Msg) error {
	cand, same, found := nearest(c.rec, m, func(i int) bool { return !c.usedAgentReq[i] }, c.binder.Map)
	if !found || !same {
		// Reuse an already-used answer of the same method before giving up.
		cand, same, found = nearest(c.rec, m, func(int) bool { return true }, c.binder.Map)
	}
	if !found || !same {
		c.note("the agent sent %s [%s], which the recording never answered; replied -32601", m.Method, m.ID)
		return c.p.send(errorResponse(m.ID, -32601, "acpscope replay: the recording has no "+m.Method+" request to answer this from"))
	}
	c.usedAgentReq[cand.index] = true
	r := &c.rec[cand.index]
	for _, b := range c.binder.LearnIf(r.Body, m.Body, notSessionID) {
		c.res.Bindings = append(c.res.Bindings, b)
		fmt.Fprintf(c.opts.Log, "replay: rebinding %s %q → %q\n", b.Path, b.Old, b.New)
	}
	if len(cand.changes) > 0 {
		c.note("answered %s [%s] from the nearest recorded request #%d (%s: %s)", m.Method, m.ID, r.Seq, Count(len(cand.changes), "param differs", "params differ"), cand.changes[0])
	}
	c.res.Answered++
	j := c.peer[cand.index]
	if j < 0 {
		c.note("recorded %s #%d was never answered; replied -32603", r.Method, r.Seq)
		return c.p.send(errorResponse(m.ID, -32603, "acpscope replay: the recorded "+m.Method+" was never answered"))
	}
	reply := SetID(c.binder.Apply(c.rec[j].Body), m.ID)
	fmt.Fprintf(c.opts.Log, "replay: ← %s [%s] answered from recorded #%d\n", m.Method, m.ID, c.rec[j].Seq)
	return c.p.send(reply)
}

func (c *clientRun) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	c.res.Notes = append(c.res.Notes, s)
	fmt.Fprintf(c.opts.Log, "replay: %s\n", s)
}

// drain reads what the agent still sends after its input closed, for
// Settle at most, so late messages are compared too.
func (c *clientRun) drain(ctx context.Context) {
	_ = c.waitFor(ctx, func() bool { return c.eof }, c.opts.Settle)
}

// compare aligns the agent's messages, recorded and live.
func (c *clientRun) compare() {
	var recAgent []protocol.Msg
	for _, m := range c.rec {
		if m.Dir == wire.DirAgent {
			recAgent = append(recAgent, m)
		}
	}
	live := append(c.sentCopy(), c.p.live...)
	protocol.Pair(live)
	var liveAgent []protocol.Msg
	for _, m := range live {
		if m.Dir == wire.DirAgent {
			liveAgent = append(liveAgent, m)
		}
	}
	c.res.Entries = Compare(Fold(recAgent, c.opts.Strict), Fold(liveAgent, c.opts.Strict),
		CompareOptions{Ignore: c.opts.Ignore, Binder: c.binder, Learn: true})
}

// sentCopy gives the live responses their request's method for display:
// the requests we sent are the recorded ones, all on the live connection.
func (c *clientRun) sentCopy() []protocol.Msg {
	var out []protocol.Msg
	for _, m := range c.rec {
		if m.Dir == wire.DirClient && m.Kind == wire.KindRequest {
			m.Conn = 0
			out = append(out, m)
		}
	}
	return out
}
