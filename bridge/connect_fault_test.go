package bridge

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/proxy"
)

// faultPlan is the plan both fault tests run: a request answered in the
// agent's place, a delayed answer followed by an injected notification.
const faultPlan = `seed: 1
rules:
  - name: refuse-new
    match: method:session/new kind:request
    answer: {error: {code: -32000, message: refused by plan}}
  - name: late-init
    match: dir:agent kind:response method:initialize
    delay: 50ms
    inject: {to: client, message: '{"jsonrpc":"2.0","method":"_test/after_init"}'}
`

// faultRecords is what a capture of faultPlan's run must hold.
var faultRecords = []string{
	"client initialize",
	"agent initialize late-init delay forwarded",
	"agent _test/after_init late-init inject injected", // toward the client
	"client session/new refuse-new answer dropped",
	"agent session/new refuse-new answer injected",
}

// TestConnectFaults runs faultPlan at connect's stdio side,
// TestServeFaults at serve's and TestProxyFaults in the HTTP proxy
// between them, against a real demo agent over Streamable HTTP and
// WebSocket: a request answered in the agent's
// place never reaches it, a delayed answer arrives whole, an injected
// notification reaches the editor, and the capture records each
// alteration once, with its rule.
func TestConnectFaults(t *testing.T) { runFaultPlan(t, "connect", "http", "ws") }

func TestServeFaults(t *testing.T) { runFaultPlan(t, "serve", "http", "ws") }

func TestProxyFaults(t *testing.T) { runFaultPlan(t, "proxy", "http", "ws") }

func runFaultPlan(t *testing.T, at string, schemes ...string) {
	plan, err := fault.Parse("fault-test.yaml", []byte(faultPlan))
	if err != nil {
		t.Fatal(err)
	}
	for _, scheme := range schemes {
		t.Run(scheme, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "faults"+capture.Ext)
			w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true, Meta: capture.Meta{Transport: scheme}})
			if err != nil {
				t.Fatal(err)
			}
			engine := fault.New(fault.Options{Plan: plan})
			tee := t.TempDir()
			f := startServe(t, netkit.H1, func(o *ServeOptions) {
				o.Argv = []string{demoAgent(t)}
				o.Agent.Env = append(os.Environ(), "ACPSCOPE_TEE_DIR="+tee)
				if at == "serve" {
					o.Recorder, o.Intercept = w, engine
				}
			})
			base := f.url
			if at == "proxy" {
				p, err := proxy.NewHTTPProxy(proxy.HTTPProxyOptions{Upstream: f.url, Recorder: w, Intercept: engine})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { p.Close() })
				base = netkit.StartServer(t, netkit.H1, p).URL + "/acp"
			}
			co := ConnectOptions{URL: scheme + base[strings.Index(base, ":"):]}
			if at == "connect" {
				co.Recorder, co.Intercept = w, engine
			}
			exchangeUnderPlan(t, co)
			waitFor(t, func() bool { return f.srv.Conns() == 0 })
			engine.Close()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if in, _ := agentBytes(t, tee); strings.Contains(string(in), "session/new") {
				t.Errorf("the agent received the session/new the plan answered:\n%s", in)
			}
			if got := protocolRecords(t, path); strings.Join(got, "\n") != strings.Join(faultRecords, "\n") {
				t.Errorf("the capture holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(faultRecords, "\n"))
			}
		})
	}
}

// exchangeUnderPlan plays the editor through connect: initialize, then
// session/new, checking each line faultPlan makes it receive.
func exchangeUnderPlan(t *testing.T, co ConnectOptions) {
	t.Helper()
	stdinR, stdinW := io.Pipe()
	outR, outW := io.Pipe()
	co.Stdin, co.Stdout = stdinR, outW
	done := make(chan error, 1)
	go func() {
		done <- Connect(context.Background(), co)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	next := func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("connect's output ended: %v", lines.Err())
		}
		return lines.Text()
	}
	io.WriteString(stdinW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n")
	if got := next(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"result":`) {
		t.Fatalf("first line %s, want the answer to initialize", got)
	}
	if got := next(); got != `{"jsonrpc":"2.0","method":"_test/after_init"}` {
		t.Fatalf("second line %s, want the injected notification", got)
	}
	io.WriteString(stdinW, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`+"\n")
	if got := next(); !strings.Contains(got, `"id":2`) || !strings.Contains(got, "refused by plan") {
		t.Fatalf("answer to session/new %s, want the plan's error", got)
	}
	stdinW.Close()
	go io.Copy(io.Discard, outR)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("connect did not end within 2m of stdin's end")
	}
}

// protocolRecords lists a capture's messages as "dir method [rule action
// stage]".
func protocolRecords(t *testing.T, path string) []string {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	if err := r.Scan(1, func(rec *capture.Record) bool {
		if rec.Kind.IsProtocol() {
			s := rec.Dir.String() + " " + rec.Method
			if fl := rec.Fault; fl != nil {
				s += " " + fl.Rule + " " + fl.Action + " " + fl.Stage
			}
			got = append(got, s)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return got
}
