package inspector

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/internal/demo"
	"github.com/acpscope/acpscope/proxy"
	"github.com/gdamore/tcell/v2"
)

// The test binary plays two more parts, chosen by envRole: the demo agent
// and a recording stdio proxy in front of it, so follow mode is tested on
// records a real proxy process writes and serves through its feed.
const (
	envRole    = "ACPSCOPE_INSPECTOR_ROLE"
	envCapture = "ACPSCOPE_INSPECTOR_CAPTURE"
	// envIntercept, set to 1, starts the proxy as --allow-intercept does.
	envIntercept = "ACPSCOPE_INSPECTOR_INTERCEPT"
)

// runRole runs the part envRole names, if any, and returns its exit code.
func runRole() (int, bool) {
	switch os.Getenv(envRole) {
	case "agent":
		err := demo.RunAgent(context.Background(), os.Stdin, os.Stdout, demo.AgentOptions{Delay: 15 * time.Millisecond, Log: os.Stderr})
		if err != nil {
			return 1, true
		}
		return 0, true
	case "proxy":
		return runProxy(os.Getenv(envCapture)), true
	}
	return 0, false
}

func runProxy(path string) int {
	w, err := capture.Create(path, capture.WriterOptions{Meta: capture.Meta{Agent: "demo", Transport: "stdio"}})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	cfg := proxy.StdioConfig{
		Argv:     []string{os.Args[0], "-test.run=^$"},
		Env:      append(os.Environ(), envRole+"=agent"),
		Recorder: w,
		Grace:    2 * time.Second,
	}
	if os.Getenv(envIntercept) == "1" {
		engine := fault.New(fault.Options{AllowIntercept: true, HoldTimeout: waitLimit, Warn: func(s string) { os.Stderr.WriteString(s + "\n") }})
		ln, _, err := capture.ListenControl(path, func(s string) { os.Stderr.WriteString(s + "\n") })
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 1
		}
		ctl := fault.Serve(engine, ln)
		defer ctl.Close()
		defer engine.Close()
		cfg.Intercept = engine
	}
	res, err := proxy.Stdio(context.Background(), cfg)
	w.UpdateMeta(func(m *capture.Meta) { m.Exit = &capture.Exit{Code: res.Exit.Code} })
	if cerr := w.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
	}
	return res.Exit.Code
}

// proxyProcess is a recording proxy running the demo agent.
type proxyProcess struct {
	cmd       *exec.Cmd
	toAgent   io.WriteCloser
	fromAgent io.ReadCloser
}

// startProxy starts the proxy writing path and waits for its feed.
func startProxy(t *testing.T, path string, env ...string) *proxyProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envRole+"=proxy", envCapture+"="+path), env...)
	cmd.Stderr = os.Stderr
	toAgent, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	fromAgent, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		toAgent.Close()
		cmd.Wait()
	})
	waitForFeed(t, path)
	return &proxyProcess{cmd: cmd, toAgent: toAgent, fromAgent: fromAgent}
}

func TestFollowRealProxy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live"+capture.Ext)
	p := startProxy(t, path)
	cmd, toAgent, fromAgent := p.cmd, p.toAgent, p.fromAgent

	h := startUI(t, Options{Path: path})
	h.resize(100, 40)
	h.waitFor("● live", "follow")

	clientDone := make(chan error, 1)
	go func() { // demo client: the conversation through the proxy
		_, err := demo.RunClient(context.Background(), fromAgent, toAgent, demo.ClientOptions{})
		toAgent.Close()
		clientDone <- err
	}()

	// While records arrive, the selection stays on the newest row.
	msgs := regexp.MustCompile(`(\d+) msgs`)
	sel := regexp.MustCompile(`#(\d+) pretty`)
	var clientErr error
	clientFinished := false
	h.waitUntil("the selection to follow the newest of more than 20 rows", func(s string) bool {
		select {
		case clientErr = <-clientDone:
			clientFinished = true
			if clientErr != nil {
				t.Fatalf("demo client: %v", clientErr)
			}
		default:
		}
		m, d := msgs.FindStringSubmatch(s), sel.FindStringSubmatch(s)
		if m == nil || d == nil {
			return false
		}
		n, _ := strconv.Atoi(m[1])
		return n > 20 && m[1] == d[1]
	})
	if !clientFinished {
		select {
		case err := <-clientDone:
			if err != nil {
				t.Fatalf("demo client: %v", err)
			}
		case <-time.After(waitLimit):
			t.Fatalf("the demo conversation did not finish within %v", waitLimit)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("proxy: %v", err)
	}
	// The proxy exited: the marker turns finished and the view is whole.
	h.waitFor("finished, exit 0", "the proxy finished")
	// The view now reads the finished file: every record is there.
	r, err := capture.Open(path)
	if err != nil {
		t.Fatalf("opening the finished capture: %v", err)
	}
	defer r.Close()
	h.waitFor(fmt.Sprintf(" %d msgs", r.Last()), fmt.Sprintf("#%d pretty", r.Last()))
	h.typeKeys("c")
	h.waitFor("turn 1", "user: Change the greeting in main.go", "[pending] Update the greeting", "tool: Read main.go (read) [pending→in_progress→completed]")
}

// waitForFeed waits until the proxy serves the capture's live feed.
func waitForFeed(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		if l, err := capture.DialLive(path, 1); err == nil {
			l.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy did not serve a feed for %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLibraryLiveCapture(t *testing.T) {
	dir := t.TempDir()
	p := startProxy(t, filepath.Join(dir, "running"+capture.Ext))
	h := startUI(t, Options{Dir: dir})
	h.resize(120, 30)
	h.waitFor("demo", "● live")
	// A live capture is not deleted: its proxy is still writing it.
	h.typeKeys("d")
	h.waitFor("this capture is live")
	// Enter follows it through the feed; the agent's exit shows.
	h.key(tcell.KeyEnter)
	h.waitFor("running"+capture.Ext, "● live", "follow")
	p.toAgent.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("proxy: %v", err)
	}
	h.waitFor("finished", "the proxy finished")
}
