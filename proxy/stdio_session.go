package proxy

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/capture"
)

// drainWait is how long the agent's output may keep flowing after the
// agent itself exited before we stop children it left behind; its own
// last words are already in the pipe, so this only matters for them.
const drainWait = 250 * time.Millisecond

// pumpWait bounds the wait for a pump told to stop (a read deadline, a
// closed pipe) before it is abandoned.
const pumpWait = time.Second

// session is one run of the stdio proxy: the agent and its three pumps.
type session struct {
	cfg   StdioConfig
	agent *agent.Process
	in    *pump // editor stdin → agent stdin
	out   *pump // agent stdout → our stdout
	errp  *pump // agent stderr → our stderr

	// afterIn and afterOut run when the stdin and stdout pumps' sources
	// end; interception (stdio_intercept.go) adds its own steps.
	afterIn, afterOut func()

	res    Result
	ladder chan struct{} // closed when the shutdown ladder returns; nil until started
	urgent chan struct{} // closed by hurry: a quiet ladder stops waiting for silence
	rushed bool          // urgent is closed; owned by watch
}

func newSession(cfg StdioConfig, a *agent.Process) *session {
	s := &session{cfg: cfg, agent: a, urgent: make(chan struct{})}
	s.res.Pid = a.Pid()
	s.in = newPump(cfg.Stdin, a.Stdin, cfg.Recorder, cfg.Conn, capture.StreamClient, cfg.BufferSize)
	s.out = newPump(a.Stdout, cfg.Stdout, cfg.Recorder, cfg.Conn, capture.StreamAgent, cfg.BufferSize)
	s.errp = newPump(a.Stderr, cfg.Stderr, cfg.Recorder, cfg.Conn, capture.StreamStderr, 64<<10)
	s.afterIn = func() { s.agent.CloseStdin() }
	s.afterOut = func() { closeIfCloser(cfg.Stdout) }
	if cfg.Intercept != nil {
		s.intercept()
	}
	return s
}

// run starts the pumps, waits for the agent to exit while reacting to the
// editor, signals and ctx, then drains and cleans up.
func (s *session) run(ctx context.Context, sigs <-chan os.Signal) Result {
	go s.in.run(s.afterIn)   // stdin pump: ends at editor EOF or stop
	go s.out.run(s.afterOut) // stdout pump: ends at agent stdout EOF
	go s.errp.run(nil)       // stderr pump: ends at agent stderr EOF
	s.watch(ctx, sigs)
	s.res.Exit = s.agent.Wait()
	s.drainOutputs()
	s.stopInput()
	if s.ladder != nil {
		<-s.ladder // returns at once: the agent is gone
	}
	s.collect()
	return s.res
}

// watch returns when the agent has exited.
func (s *session) watch(ctx context.Context, sigs <-chan os.Signal) {
	inDone, outFailed, ctxDone := s.in.srcEnded, s.out.dstFailed, ctx.Done()
	for {
		select {
		case <-s.agent.Done():
			if s.in.ended() {
				// Both ended before we looked: the editor's EOF is
				// what a well-behaved agent exits on.
				s.first(EndClient)
			}
			s.first(EndAgent)
			return
		case sig := <-sigs:
			s.first(EndSignal)
			s.res.Signal = sig
			s.agent.Forward(sig)
			// An agent that traps the signal and lingers still goes
			// down the ladder, so the editor's stop always works.
			s.startLadder(func() { s.agent.Escalate() })
			s.hurry()
		case <-inDone:
			inDone = nil
			s.first(EndClient)
			s.startLadder(s.quietLadder)
		case <-outFailed:
			outFailed = nil
			s.first(EndClient)
			s.startLadder(func() { s.agent.Shutdown() })
			s.hurry()
		case <-ctxDone:
			ctxDone = nil
			s.first(EndContext)
			s.startLadder(func() { s.agent.Shutdown() })
			s.hurry()
		}
	}
}

func (s *session) first(e End) {
	if s.res.First == EndNone {
		s.res.First = e
	}
}

// startLadder runs steps, a shutdown ladder, in its own goroutine (the
// ladder), which ends when the agent exits. Once started, a ladder runs to
// the end; stdin closing later is still passed on by the stdin pump.
func (s *session) startLadder(steps func()) {
	if s.ladder != nil {
		return
	}
	s.ladder = make(chan struct{})
	go func() {
		steps()
		close(s.ladder)
	}()
}

// hurry tells a quiet ladder already running that the editor wants the
// agent gone now (a signal, our stdout closed, ctx cancelled): it stops
// waiting for silence and escalates.
func (s *session) hurry() {
	if !s.rushed {
		s.rushed = true
		close(s.urgent)
	}
}

// quietLadder is the ladder after the editor closed stdin: the agent gets
// Grace of silence, counted from its last output on stdout or stderr, then
// Agent.Terminate. An agent still writing its last answers to an editor
// that reads them slowly is never cut off; one that goes quiet without
// exiting (codex-acp) is stopped as before.
func (s *session) quietLadder() {
	eof := time.Since(pumpEpoch)
	for {
		now := time.Since(pumpEpoch)
		quiet := now - max(eof, s.out.activeAt(now), s.errp.activeAt(now))
		if quiet >= s.cfg.Grace {
			s.agent.Terminate()
			return
		}
		t := time.NewTimer(s.cfg.Grace - quiet)
		select {
		case <-s.agent.Done():
			t.Stop()
			return
		case <-s.urgent:
			t.Stop()
			s.agent.Escalate()
			return
		case <-t.C:
		}
	}
}

// drainOutputs lets the agent's last output reach the editor, then stops
// whatever the agent left behind in its process group and closes our ends
// of its pipes so both output pumps end.
func (s *session) drainOutputs() {
	deadline := time.After(drainWait)
	drained := s.out.waitUntil(deadline) && s.errp.waitUntil(deadline)
	if !drained || s.agent.GroupAlive() {
		s.agent.StopLeftovers()
	}
	stop := time.After(s.cfg.Grace)
	if !(s.out.waitUntil(stop) && s.errp.waitUntil(stop)) {
		// Something outside our group holds the pipes: stop reading.
		s.agent.Stdout.Close()
		s.agent.Stderr.Close()
	}
	// A pump still running now is stuck writing to an editor that does
	// not read; it is muted and left behind rather than hang the exit.
	// One deadline for both, but a channel each: a channel from
	// time.After fires once, and the second stuck pump would wait forever.
	giveUp := time.Now().Add(pumpWait)
	for _, p := range []*pump{s.out, s.errp} {
		if !p.waitUntil(time.After(time.Until(giveUp))) {
			s.abandon(p)
		}
	}
	s.agent.Stdout.Close()
	s.agent.Stderr.Close()
}

// abandon mutes a pump that cannot be stopped and records its stream's
// end in its place.
func (s *session) abandon(p *pump) {
	p.quiet.Store(true)
	if p.finished() {
		return // it ended between the two checks and recorded its end
	}
	if s.cfg.Recorder != nil {
		s.cfg.Recorder.EndStream(s.cfg.Conn, p.stream, time.Now().UnixNano())
	}
}

// stopInput ends the editor-side pump. The agent is gone, so nothing read
// from now on could be delivered anyway. A reader with deadlines (a pipe
// we can poll) is stopped; one without is left blocked in Read, muted, and
// the client stream's end is recorded here.
func (s *session) stopInput() {
	s.agent.CloseStdin()
	if s.in.finished() {
		return
	}
	if d, ok := s.cfg.Stdin.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Now()) == nil {
		if s.in.waitUntil(time.After(pumpWait)) {
			return
		}
	}
	s.abandon(s.in)
}

// collect copies the pumps' counters into the result, from the pumps
// that finished (an abandoned one still owns its counters).
func (s *session) collect() {
	if s.out.finished() {
		s.res.AgentBytes = s.out.n
		s.res.StdoutErr = s.out.writeErr
	}
	if s.errp.finished() {
		s.res.StderrBytes = s.errp.n
	}
	if s.in.finished() {
		s.res.ClientBytes = s.in.n
	}
}

func closeIfCloser(w io.Writer) {
	if c, ok := w.(io.Closer); ok {
		c.Close()
	}
}
