package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a stderr a test reads while the command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runningTail is tail as a subprocess: its stdout line by line, its
// stderr as it grows.
type runningTail struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *syncBuffer
}

func startTail(t *testing.T, args ...string) *runningTail {
	t.Helper()
	rt := &runningTail{cmd: cliCommand(append([]string{"tail"}, args...)...), lines: make(chan string, 256), stderr: &syncBuffer{}}
	rt.cmd.Stderr = rt.stderr
	out, err := rt.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.cmd.Process.Kill(); rt.cmd.Wait() })
	go func() { // reader; ends when tail exits
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			rt.lines <- sc.Text()
		}
		close(rt.lines)
	}()
	return rt
}

// next returns tail's next stdout line.
func (rt *runningTail) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-rt.lines:
		if !ok {
			t.Fatalf("tail exited; stderr:\n%s", rt.stderr)
		}
		return line
	case <-time.After(waitLimit):
		t.Fatalf("tail printed nothing in %v; stderr:\n%s", waitLimit, rt.stderr)
	}
	return ""
}

// waitStderr waits until tail's stderr holds want.
func (rt *runningTail) waitStderr(t *testing.T, want string) {
	t.Helper()
	waitFor(t, func() bool { return strings.Contains(rt.stderr.String(), want) })
}

// interrupt stops tail as Ctrl-C does and returns its exit code.
func (rt *runningTail) interrupt(t *testing.T) int {
	t.Helper()
	rt.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- rt.cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(waitLimit):
		t.Fatalf("tail did not stop within %v of SIGINT", waitLimit)
	}
	return -1
}

// namedProxy is a stdio proxy recording into dir as agent name, around
// the test agent in echo mode; the editor's side stays open until close.
type namedProxy struct {
	cmd    *exec.Cmd
	editor io.WriteCloser
}

func startNamedProxy(t *testing.T, dir, name string) *namedProxy {
	t.Helper()
	cmd := cliCommand("--dir", dir, "--quiet", "--name", name, "--", testagentBin, "echo")
	editor, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &namedProxy{cmd, editor}
}

func (p *namedProxy) send(t *testing.T, method string) {
	t.Helper()
	if _, err := fmt.Fprintf(p.editor, `{"jsonrpc":"2.0","method":%q}`+"\n", method); err != nil {
		t.Fatal(err)
	}
}

// close ends the editor's side; the proxy finishes its capture and exits.
func (p *namedProxy) close(t *testing.T) {
	t.Helper()
	p.editor.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("proxy: %v", err)
	}
}

// jsonMethod returns the method of a JSONL line tail printed, failing
// the test when the line is not one JSON object.
func jsonMethod(t *testing.T, line string) string {
	t.Helper()
	var rec struct{ Method string }
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("tail --format jsonl printed a line that is not JSON: %q", line)
	}
	return rec.Method
}

// TestTailFollowNameAcrossRestarts: with no live capture, tail -F waits
// (README's tail -n 0 --filter exited 1); it follows one proxy, and when
// that proxy finishes it carries on with the next one, each marked on
// stderr so that stdout stays pure JSONL.
func TestTailFollowNameAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	rt := startTail(t, "--dir", dir, "-F", "-n", "0", "--format", "jsonl", "--filter", "dir:client")
	rt.waitStderr(t, "waiting for a capture in "+dir)

	for run := 1; run <= 2; run++ {
		p := startNamedProxy(t, dir, "restarting")
		// Live: each message sent shows while the proxy runs.
		for i := 1; i <= 2; i++ {
			method := fmt.Sprintf("run%d/msg%d", run, i)
			p.send(t, method)
			if got := jsonMethod(t, rt.next(t)); got != method {
				t.Fatalf("tail printed %q, want %q", got, method)
			}
		}
		p.close(t)
		waitFor(t, func() bool { // this run's end, said once per run
			return strings.Count(rt.stderr.String(), "the proxy finished; waiting for the next capture") == run
		})
		if n := strings.Count(rt.stderr.String(), "acpscope tail: following "); n != run {
			t.Errorf("after run %d, %d captures announced on stderr:\n%s", run, n, rt.stderr)
		}
	}
	if code := rt.interrupt(t); code != 0 {
		t.Errorf("tail -F stopped by Ctrl-C: exit %d, want 0\n%s", code, rt.stderr)
	}
	for line := range rt.lines {
		t.Errorf("tail printed %q after the last message", line)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*-restarting-*.acpscope"))
	for _, n := range names {
		if !strings.Contains(rt.stderr.String(), "following "+filepath.Base(n)+", agent restarting") {
			t.Errorf("stderr does not name %s:\n%s", filepath.Base(n), rt.stderr)
		}
	}
	if len(names) != 2 {
		t.Errorf("%d captures, want 2", len(names))
	}
}

// TestTailFollowNameOneAgent: --agent follows only that agent's runs,
// and in a table each capture begins with a separator line and the
// header; the one live when tail started comes first, from -n.
func TestTailFollowNameOneAgent(t *testing.T) {
	dir := t.TempDir()
	first := startNamedProxy(t, dir, "wanted")
	first.send(t, "before-tail")
	waitFor(t, func() bool { return strings.Contains(runCLI(t, nil, "ls", "--dir", dir).stdout, "live") })
	rt := startTail(t, "--dir", dir, "--wait", "--agent", "want*", "-n", "5", "--filter", "dir:client")
	want := func(parts ...string) {
		t.Helper()
		line := rt.next(t)
		for _, p := range parts {
			if !strings.Contains(line, p) {
				t.Fatalf("tail printed %q, want it to hold %q", line, p)
			}
		}
	}
	want("=== ", ", agent wanted, started ")
	want("SEQ", "METHOD")
	want("before-tail")
	first.close(t)
	rt.waitStderr(t, "the proxy finished; waiting for the next capture")

	other := startNamedProxy(t, dir, "other")
	other.send(t, "from-other")
	other.close(t)
	second := startNamedProxy(t, dir, "wanted")
	second.send(t, "after-restart")
	want("=== ", ", agent wanted, started ")
	want("SEQ", "METHOD")
	want("after-restart") // nothing of the other agent's came before
	second.close(t)
	if code := rt.interrupt(t); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	for line := range rt.lines {
		if strings.Contains(line, "from-other") {
			t.Errorf("tail --agent want* printed the other agent's %q", line)
		}
	}
}

// TestTailAgentFlag: without -F, --agent picks that agent's newest
// capture, and says so when there is none.
func TestTailAgentFlag(t *testing.T) {
	dir := t.TempDir()
	const agent = "solo"
	if r := runCLI(t, []byte(`{"jsonrpc":"2.0","method":"x"}`+"\n"), "--dir", dir, "--quiet", "--name", agent, "--", testagentBin, "echo"); r.code != 0 {
		t.Fatalf("proxy: exit %d: %s", r.code, r.stderr)
	}
	finishedCapture(t, dir) // another capture, of no agent
	tests := []struct {
		name    string
		args    []string
		code    int
		errText string
	}{
		{"its agent", []string{"--agent", agent, "-n", "1"}, 0, "showing its last 1 record"},
		{"a glob", []string{"--agent", agent[:1] + "*", "-n", "1"}, 0, "showing its last 1 record"},
		{"no such agent", []string{"--agent", "nosuch"}, 2, `no capture of agent "nosuch"`},
		{"a bad glob", []string{"--agent", "["}, 2, `--agent "[": syntax error in pattern`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"tail", "--dir", dir}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.errText) {
				t.Errorf("tail %q: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.errText)
			}
		})
	}
}
