package bridge

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/internal/demo"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/proxy"
	"github.com/acpscope/acpscope/wire"
)

// turnPlan alters a whole prompt turn carried over Streamable HTTP: the
// agent's permission request answered in the editor's place (so its
// answer is a POST acpscope makes), thoughts dropped from the session's
// SSE stream, the first plan update sent twice and the prompt delayed.
const turnPlan = `seed: 3
rules:
  - name: allow-edit
    match: method:session/request_permission kind:request
    answer: {result: {outcome: {outcome: selected, optionId: allow_once}}}
  - name: no-thoughts
    match: dir:agent params.update.sessionUpdate=agent_thought_chunk
    drop: true
  - name: plan-twice
    match: dir:agent params.update.sessionUpdate=plan
    times: 1
    duplicate: 1
  - name: slow-prompt
    match: method:session/prompt kind:request
    delay: 30ms
`

// TestProxyFaultsTurn runs the demo editor through connect, the HTTP
// proxy under turnPlan and serve to the demo agent, all over Streamable
// HTTP, and checks byte for byte what each side received against what
// the other sent and the plan changed, and that the capture records each
// change once, with the envelope of where it went.
func TestProxyFaultsTurn(t *testing.T) {
	plan, err := fault.Parse("turn.yaml", []byte(turnPlan))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "turn"+capture.Ext)
	w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true, Meta: capture.Meta{Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	engine := fault.New(fault.Options{Plan: plan})
	tee := t.TempDir()
	f := startServe(t, netkit.H1, func(o *ServeOptions) {
		o.Argv = []string{demoAgent(t)}
		o.Agent.Env = append(os.Environ(), "ACPSCOPE_TEE_DIR="+tee)
	})
	p, err := proxy.NewHTTPProxy(proxy.HTTPProxyOptions{Upstream: f.url, Recorder: w, Intercept: engine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	url := netkit.StartServer(t, netkit.H1, p).URL + "/acp"

	_, sent, got := conversation(t, ConnectOptions{URL: url}, demo.ClientOptions{})
	waitFor(t, func() bool { return f.srv.Conns() == 0 })
	engine.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	agentIn, agentOut := agentBytes(t, tee)

	// What the editor received: what the agent sent, without thoughts or
	// the permission request, with the first plan twice.
	var want []string
	plans := 0
	for _, l := range lines(agentOut) {
		switch {
		case strings.Contains(l, `"agent_thought_chunk"`), strings.Contains(l, `"session/request_permission"`):
			continue
		case strings.Contains(l, `"sessionUpdate":"plan"`):
			if plans++; plans == 1 {
				want = append(want, l)
			}
		}
		want = append(want, l)
	}
	if plans == 0 || !strings.Contains(string(agentOut), `"agent_thought_chunk"`) {
		t.Fatalf("the demo agent sent no plan or no thought; the test checks nothing:\n%s", agentOut)
	}
	if gotLines := lines(got); !slices.Equal(sorted(gotLines), sorted(want)) {
		t.Errorf("the editor received\n%s\nwant\n%s", strings.Join(gotLines, "\n"), strings.Join(want, "\n"))
	}

	// What the agent received: what the editor sent, and the plan's answer.
	answers := injected(t, path, wire.DirClient, "allow-edit")
	if asked := strings.Count(string(agentOut), `"session/request_permission"`); len(answers) != asked {
		t.Errorf("the plan answered %d permission requests of the agent's %d", len(answers), asked)
	}
	if wantIn := append(lines(sent), answers...); !slices.Equal(sorted(lines(agentIn)), sorted(wantIn)) {
		t.Errorf("the agent received\n%s\nwant\n%s", agentIn, strings.Join(wantIn, "\n"))
	}
	for _, a := range answers {
		if !strings.Contains(a, `"optionId":"allow_once"`) {
			t.Errorf("the plan's answer %s is not the one the plan gives", a)
		}
	}
	checkAlteredEnvelopes(t, path)
}

// injected returns the bodies of the messages rule injected in dir.
func injected(t *testing.T, path string, dir wire.Dir, rule string) []string {
	t.Helper()
	var bodies []string
	scan(t, path, func(rec *capture.Record) {
		if f := rec.Fault; f != nil && f.Rule == rule && rec.Dir == dir && f.Stage == "injected" {
			bodies = append(bodies, string(rec.Body))
		}
	})
	if len(bodies) == 0 {
		t.Fatalf("rule %s injected nothing toward %s", rule, dir.Reverse())
	}
	return bodies
}

// checkAlteredEnvelopes checks that every rule of turnPlan acted as
// recorded, and that every message delivered carries the envelope of
// the POST or stream it went by.
func checkAlteredEnvelopes(t *testing.T, path string) {
	t.Helper()
	acted := map[string]bool{}
	scan(t, path, func(rec *capture.Record) {
		if !rec.Kind.IsProtocol() {
			return
		}
		if f := rec.Fault; f != nil {
			acted[f.Rule+" "+f.Action+" "+f.Stage] = true
			if f.Superseded() || f.Stage == "dropped" {
				return
			}
		}
		if rec.HTTP == nil || rec.HTTP.Stream == "" {
			t.Errorf("record %d (%s %s) has no envelope", rec.Seq, rec.Dir, rec.Method)
		}
	})
	for _, want := range []string{
		"allow-edit answer dropped", "allow-edit answer injected",
		"no-thoughts drop dropped",
		"plan-twice duplicate forwarded", "plan-twice duplicate injected",
		"slow-prompt delay forwarded",
	} {
		if !acted[want] {
			t.Errorf("the capture records no %q; it records %v", want, acted)
		}
	}
}

// scan calls fn with each record of the capture at path, body included.
func scan(t *testing.T, path string, fn func(*capture.Record)) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Scan(1, func(rec *capture.Record) bool {
		if rec.Body, err = r.Body(rec.Seq); err != nil {
			t.Fatal(err)
		}
		fn(rec)
		return true
	}); err != nil {
		t.Fatal(err)
	}
}

func lines(b []byte) []string {
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestProxyHoldOverHTTP holds the editor's prompts in the HTTP proxy over
// Streamable HTTP, as the inspector does through the control socket: the
// first is edited and released, the second left until the hold timeout
// (5 s, long enough that the first is never timed out on a loaded
// machine) forwards it unchanged; both turns then complete, and the
// capture records the edit and the timeout.
func TestProxyHoldOverHTTP(t *testing.T) {
	dir, err := os.MkdirTemp("", "acpsh") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "h"+capture.Ext)
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, Meta: capture.Meta{Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	engine := fault.New(fault.Options{AllowIntercept: true, HoldTimeout: 5 * time.Second})
	ln, _, err := capture.ListenControl(path, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatal(err)
	}
	control := fault.Serve(engine, ln)
	tee := t.TempDir()
	f := startServe(t, netkit.H1, func(o *ServeOptions) {
		o.Argv = []string{demoAgent(t)}
		o.Agent.Env = append(os.Environ(), "ACPSCOPE_TEE_DIR="+tee)
	})
	p, err := proxy.NewHTTPProxy(proxy.HTTPProxyOptions{Upstream: f.url, Recorder: w, Intercept: engine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	url := netkit.StartServer(t, netkit.H1, p).URL + "/acp"

	c, err := fault.Dial(path, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hold("method:session/prompt kind:request"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- talk(url, demo.ClientOptions{Prompts: []string{"first", "second"}}) }()

	held := nextHeld(t, c)
	if held.Dir != "client" || !strings.Contains(held.Message, `"first"`) {
		t.Fatalf("held %+v, want the first prompt", held)
	}
	edited := strings.Replace(held.Message, `"first"`, `"first, edited"`, 1)
	if err := c.Release(held.ID, fault.VerdictEdit, []byte(edited)); err != nil {
		t.Fatal(err)
	}
	second := nextHeld(t, c) // left to time out
	if !strings.Contains(second.Message, `"second"`) {
		t.Fatalf("held %+v, want the second prompt", second)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the editor: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the turns did not complete within 2m")
	}
	c.Close()
	control.Close()
	waitFor(t, func() bool { return f.srv.Conns() == 0 })
	engine.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	agentIn, _ := agentBytes(t, tee)
	for _, want := range []string{edited, second.Message} {
		if !slices.Contains(lines(agentIn), want) {
			t.Errorf("the agent did not receive\n%s\nit received\n%s", want, agentIn)
		}
	}
	if strings.Contains(string(agentIn), held.Message) {
		t.Errorf("the agent received the prompt as it was before the edit")
	}
	var stages []string
	scan(t, path, func(rec *capture.Record) {
		if f := rec.Fault; f != nil {
			stages = append(stages, f.Action+" "+f.Stage)
		}
	})
	if want := []string{"edit replaced", "edit forwarded", "hold forwarded"}; !slices.Equal(stages, want) {
		t.Errorf("the capture records %v, want %v", stages, want)
	}
}

// nextHeld waits for the control socket's next held message.
func nextHeld(t *testing.T, c *fault.Client) *fault.HeldView {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatal("the control connection ended")
			}
			if ev.Event == "held" {
				return ev.Held
			}
		case <-timeout:
			t.Fatal("nothing was held within 2m")
		}
	}
}

// talk runs the demo editor through connect to url.
func talk(url string, opts demo.ClientOptions) error {
	toConnect, clientOut := io.Pipe()
	clientIn, fromConnect := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err := Connect(ctx, ConnectOptions{URL: url, Stdin: toConnect, Stdout: fromConnect})
		fromConnect.Close()
		done <- err
	}()
	_, err := demo.RunClient(ctx, clientIn, clientOut, opts)
	clientOut.Close()
	if cerr := <-done; err == nil {
		err = cerr
	}
	return err
}
