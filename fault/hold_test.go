package fault_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

func dial(t *testing.T, r *run) *fault.Client {
	t.Helper()
	c, err := fault.Dial(r.path, waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// nextEvent waits for the next event of kind.
func nextEvent(t *testing.T, c *fault.Client, kind string) fault.Event {
	t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatalf("the control connection ended while waiting for %q", kind)
			}
			if ev.Event == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q event", kind)
		}
	}
}

// TestHoldEditRelease holds the editor's messages, edits one, drops one
// and forwards one, while the agent's direction keeps flowing.
func TestHoldEditRelease(t *testing.T) {
	r := start(t, "", fault.Options{AllowIntercept: true})
	c := dial(t, r)
	if !c.Intercept() {
		t.Fatal("the proxy does not say it allows holding")
	}
	if err := c.Hold("dir:client and not params.k=1"); err != nil {
		t.Fatal(err)
	}
	r.send(msg(1), msg(2))
	held := nextEvent(t, c, "held")
	if held.Held.Message != msg(2) || held.Held.Dir != "client" {
		t.Fatalf("held %+v, want %s from the client", held.Held, msg(2))
	}
	// The other direction flows while the editor's is held: the echo of 1.
	if out := r.waitOut(1); out[0] != msg(1) {
		t.Fatalf("the editor received %q", out)
	}
	if err := c.Release(held.Held.ID, fault.VerdictEdit, []byte(msg(20))); err != nil {
		t.Fatal(err)
	}
	r.send(msg(3))
	h3 := nextEvent(t, c, "held")
	if err := c.Release(h3.Held.ID, fault.VerdictDrop, nil); err != nil {
		t.Fatal(err)
	}
	r.send(msg(4))
	h4 := nextEvent(t, c, "held")
	if err := c.Release(h4.Held.ID, fault.VerdictForward, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(h4.Held.ID, fault.VerdictForward, nil); err == nil {
		t.Error("releasing a message twice was accepted")
	}
	r.waitOut(3)
	_, out, recs := r.finish()
	if want := []string{msg(1), msg(20), msg(4)}; !slices.Equal(out, want) {
		t.Errorf("the editor received %q, want %q", out, want)
	}
	want := []string{"client " + msg(1), "client " + msg(2) + " [replaced edit intercept]", "client " + msg(20) + " [forwarded edit intercept]",
		"client " + msg(3) + " [dropped drop intercept]", "client " + msg(4) + " [forwarded hold intercept]"}
	if got := byDir(recs, wire.DirClient); !slices.Equal(got, want) {
		t.Errorf("capture:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkFaultRecords(t, recs)
}

// TestHoldTimeout checks that a message no one releases goes on
// unchanged after the timeout, with a warning, and is recorded so.
func TestHoldTimeout(t *testing.T) {
	var mu sync.Mutex
	var warnings []string
	r := start(t, "", fault.Options{AllowIntercept: true, HoldTimeout: 200 * time.Millisecond, Warn: func(s string) {
		mu.Lock()
		warnings = append(warnings, s)
		mu.Unlock()
	}})
	c := dial(t, r)
	if err := c.Hold("dir:client"); err != nil {
		t.Fatal(err)
	}
	r.send(msg(1))
	nextEvent(t, c, "held")
	rel := nextEvent(t, c, "released")
	if !strings.Contains(rel.Note, "timed out") {
		t.Errorf("released with note %q", rel.Note)
	}
	r.waitOut(1)
	_, out, recs := r.finish()
	if !slices.Equal(out, []string{msg(1)}) {
		t.Errorf("the editor received %q", out)
	}
	if f := recs[0].Fault; f == nil || f.Action != protocol.ActionHold || !strings.Contains(f.Note, "timed out") {
		t.Errorf("record 1 fault %+v", f)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "timed out") {
		t.Errorf("warnings %q", warnings)
	}
}

// TestHangUpReleases checks that the intercepting client going away
// releases what it held and stops holding.
func TestHangUpReleases(t *testing.T) {
	r := start(t, "", fault.Options{AllowIntercept: true})
	c := dial(t, r)
	if err := c.Hold("dir:client"); err != nil {
		t.Fatal(err)
	}
	r.send(msg(1))
	nextEvent(t, c, "held")
	c.Close()
	r.waitOut(1)
	r.send(msg(2)) // no longer held
	r.waitOut(2)
	_, out, _ := r.finish()
	if !slices.Equal(out, []string{msg(1), msg(2)}) {
		t.Errorf("the editor received %q", out)
	}
}

// TestHoldNeedsPermission checks that holding needs --allow-intercept
// (AllowIntercept) while sending does not need holding.
func TestHoldNeedsPermission(t *testing.T) {
	r := start(t, "", fault.Options{AllowIntercept: true})
	c := dial(t, r)
	if err := c.Hold("kind:nonsense-"); err == nil {
		t.Error("a bad filter was accepted")
	}
	r.finish()
}

// TestSendBothWays injects messages mid-stream toward the agent and
// toward the editor through the control socket.
func TestSendBothWays(t *testing.T) {
	r := start(t, "", fault.Options{AllowIntercept: true})
	c := dial(t, r)
	r.send(msg(1))
	r.waitOut(1)
	if _, err := c.Send("agent", 0, []byte(msg(5))); err != nil {
		t.Fatal(err)
	}
	r.waitOut(2) // the agent echoed what it was sent
	if _, err := c.Send("client", 0, []byte(msg(6))); err != nil {
		t.Fatal(err)
	}
	r.waitOut(3)
	if _, err := c.Send("editor", 0, []byte(msg(6))); err == nil {
		t.Error("send to 'editor' was accepted")
	}
	if _, err := c.Send("agent", 3, []byte(msg(6))); err == nil {
		t.Error("send on a connection that does not exist was accepted")
	}
	r.send(msg(2))
	r.waitOut(4)
	_, out, recs := r.finish()
	if want := []string{msg(1), msg(5), msg(6), msg(2)}; !slices.Equal(out, want) {
		t.Errorf("the editor received %q, want %q", out, want)
	}
	wantClient := []string{"client " + msg(1), "client " + msg(5) + " [injected send send]", "client " + msg(2)}
	if got := byDir(recs, wire.DirClient); !slices.Equal(got, wantClient) {
		t.Errorf("capture, editor's side:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantClient, "\n"))
	}
	wantAgent := []string{"agent " + msg(1), "agent " + msg(5), "agent " + msg(6) + " [injected send send]", "agent " + msg(2)}
	if got := byDir(recs, wire.DirAgent); !slices.Equal(got, wantAgent) {
		t.Errorf("capture, agent's side:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantAgent, "\n"))
	}
}

func TestHoldRefusedWithoutAllow(t *testing.T) {
	r := start(t, "rules: [{drop: true, match: 'method:nothing'}]", fault.Options{})
	defer r.finish()
	if _, err := fault.Dial(r.path, time.Second); err == nil {
		t.Error("a run without AllowIntercept has a control socket")
	}
}
