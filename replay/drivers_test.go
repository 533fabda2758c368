package replay

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/demo"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// wireLog collects the lines both peers write, in write order, as a
// recording.
type wireLog struct {
	mu   sync.Mutex
	msgs []protocol.Msg
}

func (l *wireLog) add(dir wire.Dir, line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, raw := range bytes.Split(bytes.TrimSuffix(line, []byte("\n")), []byte("\n")) {
		m := protocol.FromLine(uint64(len(l.msgs)+1), dir, append([]byte(nil), raw...))
		m.Time = time.Now().UnixNano()
		l.msgs = append(l.msgs, m)
	}
}

func (l *wireLog) messages() []protocol.Msg {
	l.mu.Lock()
	defer l.mu.Unlock()
	msgs := append([]protocol.Msg(nil), l.msgs...)
	protocol.Pair(msgs) // responses learn their request's method and session
	return msgs
}

// tee is a pipe writer that logs each write.
type tee struct {
	w   *io.PipeWriter
	dir wire.Dir
	log *wireLog
}

func (t tee) Write(b []byte) (int, error) {
	t.log.add(t.dir, b)
	return t.w.Write(b)
}

func (t tee) Close() error { return t.w.Close() }

// recordDemo runs the demo client against the demo agent over pipes and
// returns the conversation as recorded on the wire.
func recordDemo(t *testing.T, agentOpts demo.AgentOptions, clientOpts demo.ClientOptions) []protocol.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	log := &wireLog{}
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	done := make(chan error, 1)
	go func() { // the demo agent; ends when the client closes its input
		err := demo.RunAgent(ctx, toAgentR, tee{toClientW, wire.DirAgent, log}, agentOpts)
		toClientW.Close()
		done <- err
	}()
	if _, err := demo.RunClient(ctx, toClientR, tee{toAgentW, wire.DirClient, log}, clientOpts); err != nil {
		t.Fatalf("demo client: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("demo agent: %v", err)
	}
	return log.messages()
}

// replayAgainstDemo replays rec to an in-process demo agent.
func replayAgainstDemo(t *testing.T, rec []protocol.Msg, agentOpts demo.AgentOptions, opts ClientOptions) (*Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var logBuf testkit.Buffer
	opts.Log = &logBuf
	if opts.Settle == 0 {
		opts.Settle = 300 * time.Millisecond
	}
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	done := make(chan error, 1)
	go func() { // the demo agent under test
		err := demo.RunAgent(ctx, toAgentR, toClientW, agentOpts)
		toClientW.Close()
		done <- err
	}()
	res, err := RunClient(ctx, rec, toClientR, toAgentW, opts)
	toClientR.Close()
	<-done
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, logBuf.String())
	}
	return res, logBuf.String()
}

func report(res *Result) string {
	var b bytes.Buffer
	WriteEntries(&b, res.Entries, "recorded", "replayed")
	return b.String() + strings.Join(res.Notes, "\n")
}

func TestReplayClientMatchesDemo(t *testing.T) {
	rec := recordDemo(t, demo.AgentOptions{}, demo.ClientOptions{Sessions: 2})
	if n := len(Sessions(rec)); n != 2 {
		t.Fatalf("recording has %d sessions, want 2", n)
	}
	// A uuid session scheme makes every sessionId differ: rebinding must
	// carry the new ids into the prompts of both sessions.
	res, log := replayAgainstDemo(t, rec, demo.AgentOptions{SessionScheme: demo.SchemeUUID}, ClientOptions{Ignore: Ignore(DefaultIgnore)})
	if !res.Match() {
		t.Fatalf("replay against the same agent does not match:\n%s\n%s", report(res), log)
	}
	if res.Answered == 0 {
		t.Error("no agent request (fs, terminal, permission) was answered from the recording")
	}
	sessionBindings := 0
	for _, b := range res.Bindings {
		if strings.HasSuffix(b.Path, "sessionId") && strings.HasPrefix(b.Old, "sess_") {
			sessionBindings++
		}
	}
	if sessionBindings < 2 {
		t.Errorf("learned %d sessionId bindings, want 2 (one per session): %+v", sessionBindings, res.Bindings)
	}
	if !strings.Contains(log, "terminal/") {
		t.Errorf("no terminal request was answered during the replay:\n%s", log)
	}
}

func TestReplayClientNoticesMutation(t *testing.T) {
	rec := recordDemo(t, demo.AgentOptions{}, demo.ClientOptions{Sessions: 2})
	tests := []struct {
		mutate string
		want   string // in the readable report
	}{
		{demo.MutateTitle, "title"},
		{demo.MutateExtra, "mutated on purpose"},
		{demo.MutateDrop, "usage_update"},
	}
	for _, tt := range tests {
		t.Run(tt.mutate, func(t *testing.T) {
			res, log := replayAgainstDemo(t, rec, demo.AgentOptions{Mutate: tt.mutate}, ClientOptions{Ignore: Ignore(DefaultIgnore)})
			if res.Match() {
				t.Fatalf("a mutated agent matched the recording\n%s", log)
			}
			if r := report(res); !strings.Contains(r, tt.want) {
				t.Errorf("report does not name the change (%q):\n%s", tt.want, r)
			}
			// One deliberate change must not derail rebinding: no id of
			// the agent's may show up as changed.
			for _, e := range res.Entries {
				for _, c := range e.Changes {
					if strings.HasSuffix(c.Path, "Id") {
						t.Errorf("spurious identifier change %s\n%s", c, report(res))
					}
				}
			}
			for _, b := range res.Bindings {
				if strings.HasSuffix(b.Path, "sessionId") && !strings.HasPrefix(b.Path, "result.") {
					t.Errorf("session id learned from a notification: %+v", b)
				}
			}
		})
	}
}

// serveToDemoClient replays rec as the agent to an in-process demo client;
// it returns the replay's result and log and the client's summary and error.
func serveToDemoClient(t *testing.T, rec []protocol.Msg, clientOpts demo.ClientOptions) (*AgentResult, demo.Summary, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var logBuf testkit.Buffer
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	type out struct {
		res *AgentResult
		err error
	}
	done := make(chan out, 1)
	go func() { // the replaying agent; ends when the client closes its output
		res, err := RunAgent(ctx, rec, toAgentR, toClientW, AgentOptions{Log: &logBuf})
		toClientW.Close()
		done <- out{res, err}
	}()
	if clientOpts.Grace == 0 {
		clientOpts.Grace = 2 * time.Second
	}
	sum, clientErr := demo.RunClient(ctx, toClientR, toAgentW, clientOpts)
	toAgentR.Close()
	o := <-done
	if o.err != nil {
		t.Fatalf("replay as agent: %v\n%s", o.err, logBuf.String())
	}
	return o.res, sum, logBuf.String(), clientErr
}

func TestReplayAsAgentServesDemoClient(t *testing.T) {
	// Recorded with uuid session ids; the client must follow them.
	rec := recordDemo(t, demo.AgentOptions{SessionScheme: demo.SchemeUUID}, demo.ClientOptions{Sessions: 2})
	res, sum, log, err := serveToDemoClient(t, rec, demo.ClientOptions{Sessions: 2})
	if err != nil {
		t.Fatalf("demo client failed against the replay: %v\n%s", err, log)
	}
	if res.Unmatched != 0 || res.Skipped != 0 {
		t.Errorf("unmatched %d, skipped %d:\n%s", res.Unmatched, res.Skipped, log)
	}
	if len(sum.Sessions) != 2 || sum.Sessions[0].ID != Sessions(rec)[0] {
		t.Fatalf("client saw sessions %+v, want the recorded %v", sum.Sessions, Sessions(rec))
	}
	if sum.AgentName != demo.AgentName || len(sum.Sessions[1].Turns) == 0 || sum.Sessions[1].Turns[0].StopReason != demo.StopEndTurn {
		t.Errorf("client summary does not show full turns: %+v", sum)
	}
}

func TestDiffTwoDemoRuns(t *testing.T) {
	a := recordDemo(t, demo.AgentOptions{}, demo.ClientOptions{})
	b := recordDemo(t, demo.AgentOptions{SessionScheme: demo.SchemeUUID}, demo.ClientOptions{})
	if d := DiffConversations(a, b, CompareOptions{Ignore: Ignore(DefaultIgnore)}, false); !d.Same() {
		var buf bytes.Buffer
		d.WriteText(&buf, "a", "b")
		t.Fatalf("two runs of the same demo differ:\n%s", buf.String())
	}
	c := recordDemo(t, demo.AgentOptions{Mutate: demo.MutateTitle}, demo.ClientOptions{})
	d := DiffConversations(a, c, CompareOptions{Ignore: Ignore(DefaultIgnore)}, false)
	var buf bytes.Buffer
	d.WriteText(&buf, "a", "c")
	if d.Same() {
		t.Fatalf("a mutated run diffs the same:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "title") || !strings.Contains(buf.String(), "latency") {
		t.Errorf("diff does not name the title change or show latency:\n%s", buf.String())
	}
	if n := Mismatches(d.Entries); n > 3 {
		t.Errorf("one mutation produced %d differing entries:\n%s", n, buf.String())
	}
}

func TestReplayClientTimeout(t *testing.T) {
	rec := demoConv("s1", "end_turn", "hi")
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	go io.Copy(io.Discard, toAgentR) // an agent that reads and never answers
	defer toClientW.Close()
	// A replay that waited on a silent agent past its Timeout would run
	// into ctx and fail with its error.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	res, err := RunClient(ctx, rec, toClientR, toAgentW, ClientOptions{Timeout: 200 * time.Millisecond, Settle: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Match() || res.Sent != 1 || len(res.Notes) != 2 || !strings.Contains(res.Notes[0], "timed out after 200ms waiting for the answer to initialize") {
		t.Errorf("sent %d, notes %q", res.Sent, res.Notes)
	}
}
