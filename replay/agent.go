package replay

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// AgentOptions tune RunAgent.
type AgentOptions struct {
	// Speed scales the recorded spacing of the agent's messages: 1 is
	// real time, 10 ten times faster, 0 (--speed max) no waiting.
	Speed float64
	// Timeout bounds each wait for the client's answer to one of our
	// requests (default 30 s); the replay goes on without it.
	Timeout time.Duration
	// Log receives progress and reports (stderr); nil discards.
	Log io.Writer
	// Tap sees every line sent and received.
	Tap Tap
}

// AgentResult is what serving a recording found.
type AgentResult struct {
	Served    int      // recorded client requests matched and answered
	Unmatched int      // client requests answered with an error
	Skipped   int      // recorded client messages the client never sent, skipped or still due when it left
	Notes     []string // each unmatched request and other surprises
}

// agentRun is the state of one replay as agent; one goroutine owns it.
type agentRun struct {
	opts   AgentOptions
	rec    []protocol.Msg
	peer   []int // protocol.Pair of rec
	p      *peer
	binder *Binder
	res    AgentResult
	// state of each recorded client message: consumed by a live one
	// (liveID holds its id) or skipped.
	consumed map[int]bool
	skipped  map[int]bool
	liveID   map[int][]byte
	// answers holds the client's live responses by the id we sent.
	answers map[string]*protocol.Msg
	cursor  int
	lastAt  time.Time // when the previous step happened, for spacing
	eof     bool
}

// RunAgent serves the agent side of rec to a client writing clientOut
// (what the client sends) and reading clientIn: it matches each client
// message to the recorded one, answers with the recorded response (the
// client's JSON-RPC id, rebound identifiers), and sends the recorded
// notifications and requests with their recorded spacing. It returns when
// the client closes its output.
func RunAgent(ctx context.Context, rec []protocol.Msg, clientOut io.Reader, clientIn io.Writer, opts AgentOptions) (*AgentResult, error) {
	rec = Protocol(rec)
	if len(rec) == 0 {
		return nil, ErrNoMessages
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	a := &agentRun{
		opts: opts, rec: rec, peer: protocol.Pair(rec), binder: NewBinder(),
		p:        newPeer(clientOut, clientIn, wire.DirClient, opts.Tap),
		consumed: map[int]bool{}, skipped: map[int]bool{}, liveID: map[int][]byte{},
		answers: map[string]*protocol.Msg{}, lastAt: time.Now(),
	}
	defer a.p.close()
	err := a.run(ctx)
	a.countUnsent()
	return &a.res, err
}

// countUnsent counts as skipped the recorded client requests and
// notifications still due when the run ended: a client that left after
// initialize never sent the rest either.
func (a *agentRun) countUnsent() {
	n := 0
	for i := range a.rec {
		r := &a.rec[i]
		if r.Dir == wire.DirClient && !r.Kind.IsResponse() && !a.consumed[i] && !a.skipped[i] {
			a.skipped[i] = true
			n++
		}
	}
	a.res.Skipped += n
	if n > 0 {
		fmt.Fprintf(a.opts.Log, "replay: %s never came\n", Count(n, "recorded client message", "recorded client messages"))
	}
}

func (a *agentRun) run(ctx context.Context) error {
	for a.cursor < len(a.rec) {
		i := a.cursor
		m := &a.rec[i]
		var err error
		switch {
		case m.Dir == wire.DirClient && m.Kind.IsResponse():
			err = a.awaitAnswer(ctx, i)
		case m.Dir == wire.DirClient:
			err = a.awaitClient(ctx, i)
		default:
			err = a.emit(ctx, i)
		}
		if err != nil {
			return err
		}
		if a.cursor == i {
			a.cursor++
		}
		if a.eof {
			fmt.Fprintf(a.opts.Log, "replay: the client closed its output at recorded #%d\n", m.Seq)
			return nil
		}
	}
	fmt.Fprintf(a.opts.Log, "replay: the recording has ended; answering further requests with errors until the client closes\n")
	for !a.eof {
		if err := a.next(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// awaitClient waits until the client has sent the recorded message i (or
// one past it, which skips it). A request is waited for as long as the
// client stays (a person may be typing the next prompt); a notification
// such as session/cancel only for about its recorded delay, so a client
// that never cancels does not stall the rest of the turn.
func (a *agentRun) awaitClient(ctx context.Context, i int) error {
	var deadline <-chan time.Time
	if a.rec[i].Kind == wire.KindNotification {
		wait := time.Second
		if i > 0 && a.opts.Speed > 0 {
			wait = max(wait, 2*time.Duration(float64(a.rec[i].Time-a.rec[i-1].Time)/a.opts.Speed))
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		deadline = timer.C
	}
	for !a.consumed[i] && !a.skipped[i] && !a.eof {
		err := a.next(ctx, deadline)
		if err == ErrTimeout {
			a.skipped[i] = true
			a.res.Skipped++
			fmt.Fprintf(a.opts.Log, "replay: the client did not send recorded %s #%d; going on without it\n", a.rec[i].Method, a.rec[i].Seq)
			return nil
		}
		if err != nil {
			return err
		}
	}
	if a.consumed[i] {
		a.lastAt = time.Now()
	}
	return nil
}

// awaitAnswer waits for the client's answer to a recorded agent request
// (recorded as message i) and learns the identifiers it mints
// (terminalId, …).
func (a *agentRun) awaitAnswer(ctx context.Context, i int) error {
	m, j := &a.rec[i], a.peer[i]
	if j < 0 {
		return nil
	}
	id := string(a.rec[j].ID)
	deadline := time.NewTimer(a.opts.Timeout)
	defer deadline.Stop()
	for a.answers[id] == nil && !a.eof {
		if err := a.next(ctx, deadline.C); err != nil {
			if err == ErrTimeout {
				a.note("the client did not answer %s [%s] within %s", a.rec[j].Method, id, a.opts.Timeout)
				return nil
			}
			return err
		}
	}
	if live := a.answers[id]; live != nil {
		for _, b := range a.binder.Learn(m.Body, live.Body) {
			fmt.Fprintf(a.opts.Log, "replay: rebinding %s %q → %q\n", b.Path, b.Old, b.New)
		}
	}
	a.lastAt = time.Now()
	return nil
}

// emit sends recorded agent message i after its recorded spacing.
func (a *agentRun) emit(ctx context.Context, i int) error {
	m := &a.rec[i]
	body := m.Body
	if j := a.peer[i]; m.Kind.IsResponse() {
		if j < 0 || !a.consumed[j] {
			return nil // answers a request this client never sent
		}
		body = SetID(body, a.liveID[j])
	}
	if err := a.pace(ctx, i); err != nil {
		return err
	}
	if err := a.p.send(a.binder.Apply(body)); err != nil {
		return err
	}
	a.lastAt = time.Now()
	return nil
}

// pace waits the recorded gap before message i, scaled by Speed, while
// handling what the client sends meanwhile.
func (a *agentRun) pace(ctx context.Context, i int) error {
	if a.opts.Speed <= 0 || i == 0 {
		return nil
	}
	gap := time.Duration(float64(a.rec[i].Time-a.rec[i-1].Time) / a.opts.Speed)
	wait := time.Until(a.lastAt.Add(gap))
	if wait <= 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for !a.eof {
		if err := a.next(ctx, timer.C); err == ErrTimeout {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// next handles one message from the client, or returns ErrTimeout when
// timeout fires first.
func (a *agentRun) next(ctx context.Context, timeout <-chan time.Time) error {
	select {
	case m, ok := <-a.p.in:
		if !ok {
			a.eof = true
			return nil
		}
		return a.handle(&m)
	case <-timeout:
		return ErrTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handle matches one live client message against the recording.
func (a *agentRun) handle(m *protocol.Msg) error {
	if m.Kind.IsResponse() {
		a.answers[string(m.ID)] = m
		return nil
	}
	if m.Kind != wire.KindRequest && m.Kind != wire.KindNotification {
		a.note("ignored a %s line from the client", m.Kind)
		return nil
	}
	usable := func(i int) bool { return i >= a.cursor && !a.consumed[i] && !a.skipped[i] }
	mapOld := a.binder.Map
	cand, same, found := nearest(a.rec, m, usable, mapOld)
	if found && same && (len(cand.changes) == 0 || lenient(m.Method)) {
		return a.consume(m, cand)
	}
	return a.unmatched(m, cand, found)
}

// consume binds live message m to recorded candidate cand; recorded client
// messages between the cursor and it were never sent by this client.
func (a *agentRun) consume(m *protocol.Msg, cand candidate) error {
	i := cand.index
	a.consumed[i] = true
	a.liveID[i] = m.ID
	for j := a.cursor; j < i; j++ {
		r := &a.rec[j]
		if r.Dir == wire.DirClient && !r.Kind.IsResponse() && !a.consumed[j] && !a.skipped[j] {
			a.skipped[j] = true
			a.res.Skipped++
			fmt.Fprintf(a.opts.Log, "replay: the client skipped recorded %s #%d\n", r.Method, r.Seq)
		}
	}
	if m.Kind == wire.KindRequest {
		a.res.Served++
	}
	// Identifiers the client chose (session/load's sessionId, …) replace
	// the recorded ones in what we send from now on.
	for _, b := range a.binder.Learn(a.rec[i].Body, m.Body) {
		fmt.Fprintf(a.opts.Log, "replay: rebinding %s %q → %q\n", b.Path, b.Old, b.New)
	}
	if len(cand.changes) > 0 {
		fmt.Fprintf(a.opts.Log, "replay: %s%s matched recorded #%d with %s (first: %s)\n",
			m.Method, idTag(m.ID), a.rec[i].Seq, Count(len(cand.changes), "difference", "differences"), cand.changes[0])
	} else {
		fmt.Fprintf(a.opts.Log, "replay: %s%s matched recorded #%d\n", m.Method, idTag(m.ID), a.rec[i].Seq)
	}
	return nil
}

// unmatched reports a client message the recording has no place for, with
// the nearest candidate and its diff, and answers a request with an error.
func (a *agentRun) unmatched(m *protocol.Msg, cand candidate, found bool) error {
	a.res.Unmatched++
	msg := fmt.Sprintf("no recorded %s matches the client's %s%s", m.Method, m.Kind, idTag(m.ID))
	code := -32603
	if found {
		r := &a.rec[cand.index]
		msg += fmt.Sprintf("; nearest is recorded #%d %s", r.Seq, r.Method)
		if r.Method != m.Method {
			code = -32601
		}
	} else {
		code = -32601
	}
	a.note("%s", msg)
	for _, c := range cand.changes {
		fmt.Fprintf(a.opts.Log, "replay:     %s\n", c)
	}
	if m.Kind != wire.KindRequest {
		return nil
	}
	return a.p.send(errorResponse(m.ID, code, "acpscope replay: "+msg))
}

func (a *agentRun) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	a.res.Notes = append(a.res.Notes, s)
	fmt.Fprintf(a.opts.Log, "replay: %s\n", s)
}
