package proxy

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit"
)

// streamCases are the adversarial inputs the proxy must pass through
// untouched. Sizes above 1 MiB are built by bigLine.
func streamCases() []struct {
	name string
	data []byte
} {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	return []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one request", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")},
		{"invalid JSON", []byte("{\"jsonrpc\":\"2.0\",\"id\":\n{{{]]]\nnot json at all\n")},
		{"invalid UTF-8", []byte("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"\xff\xfe\xc3\x28\xed\xa0\x80\"}\n")},
		{"CRLF", []byte("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\r\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\r\n\r\n")},
		{"no final newline", []byte(`{"jsonrpc":"2.0","id":"x","result":{}}`)},
		{"empty lines", []byte("\n\n\n{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n")},
		{"batch", []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","id":2,"result":null}]` + "\n")},
		{"NUL and control bytes", []byte("\x00\x01\x02\x1b[31m\x7f\n\x00")},
		{"binary garbage 1 MiB", random},
		{"1 MiB line", bigLine(1 << 20)},
		{"16 MiB line", bigLine(16 << 20)},
	}
}

// bigLine returns one JSON notification of n bytes, newline included.
func bigLine(n int) []byte {
	head := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"text":"`)
	tail := []byte(`"}}` + "\n")
	b := make([]byte, n)
	copy(b, head)
	for i := len(head); i < n-len(tail); i++ {
		b[i] = 'a' + byte(i%26)
	}
	copy(b[n-len(tail):], tail)
	return b
}

// writeChunks writes b in pieces of random sizes, so the proxy sees
// lines split at arbitrary points, then closes w.
func writeChunks(w *os.File, b []byte, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	for len(b) > 0 {
		n := min(len(b), 1+int(rng.UintN(300<<10)))
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return w.Close()
}

func TestStdioTransparentEcho(t *testing.T) {
	for i, tc := range streamCases() {
		t.Run(tc.name, func(t *testing.T) {
			checkEcho(t, tc.data, uint64(i))
		})
	}
}

// TestStdio100MiBLine pushes a 100 MiB line through both directions.
func TestStdio100MiBLine(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MiB line skipped in -short mode")
	}
	start := time.Now()
	checkEcho(t, bigLine(100<<20), 100)
	t.Logf("100 MiB each way in %v", time.Since(start))
}

// checkEcho sends data through the proxy to the echo agent and back, and
// checks what came out and what was recorded on both streams.
func checkEcho(t *testing.T, data []byte, seed uint64) {
	t.Helper()
	p := startProxy(t, StdioConfig{}, "echo")
	werr := make(chan error, 1)
	go func() { werr <- writeChunks(p.stdin, data, seed) }()
	res := p.wait(t, stdioWait)
	if err := <-werr; err != nil {
		t.Fatalf("writing stdin: %v", err)
	}
	if p.err != nil || res.Exit.Code != 0 {
		t.Fatalf("result %+v, err %v", res, p.err)
	}
	if msg := p.out.diff(data); msg != "" {
		t.Errorf("stdout: %s", msg)
	}
	p.rec.check(t, capture.StreamClient, data)
	p.rec.check(t, capture.StreamAgent, data)
	if res.ClientBytes != int64(len(data)) || res.AgentBytes != int64(len(data)) {
		t.Errorf("counted %d bytes in, %d out; want %d", res.ClientBytes, res.AgentBytes, len(data))
	}
	if res.First != EndClient {
		t.Errorf("first end = %v, want client", res.First)
	}
}

// TestStdioAgentToClient checks the agent→editor direction on its own:
// the agent writes a burst the test can predict, with nothing sent in.
func TestStdioAgentToClient(t *testing.T) {
	const n, size = 20000, 200
	var want bytes.Buffer
	line := []byte(`{"jsonrpc":"2.0","method":"bench/tick","params":{"i":"0000000000","pad":"`)
	pad := size - len(line) - len(`"}}`+"\n")
	for i := range n {
		want.WriteString(`{"jsonrpc":"2.0","method":"bench/tick","params":{"i":"`)
		want.WriteString(strings.Repeat("0", 10-len(itoa(int64(i)))) + itoa(int64(i)))
		want.WriteString(`","pad":"` + strings.Repeat("x", pad) + `"}}` + "\n")
	}
	p := startProxy(t, StdioConfig{}, "burst", itoa(n), itoa(size))
	res := p.wait(t, stdioWait)
	if res.Exit.Code != 0 || res.First != EndAgent {
		t.Errorf("result %+v, want exit 0, agent first", res)
	}
	if msg := p.out.diff(want.Bytes()); msg != "" {
		t.Errorf("stdout: %s", msg)
	}
	p.rec.check(t, capture.StreamAgent, want.Bytes())
	p.rec.check(t, capture.StreamClient, nil)
}

// TestStdioStreamsBeforeNewline: bytes of a line flow before the line
// ends; nothing waits for a newline.
func TestStdioStreamsBeforeNewline(t *testing.T) {
	p := startProxy(t, StdioConfig{}, "echo")
	part := bigLine(4 << 20)[:3<<20] // no newline in it
	go p.stdin.Write(part)
	deadline := time.Now().Add(stdioWait)
	for {
		got := p.rec.seen(capture.StreamAgent)
		if got == int64(len(part)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d bytes of an unfinished line came back in %v", got, len(part), stdioWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.stdin.Close()
	p.wait(t, stdioWait)
	if msg := p.out.diff(part); msg != "" {
		t.Errorf("stdout: %s", msg)
	}
}

func TestStdioExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		argv   []string
		code   int
		first  End
		signal syscall.Signal
	}{
		{"exit 0 at EOF", agentArgv("exit", "0"), 0, EndClient, 0},
		{"exit 3 at EOF", agentArgv("exit", "3"), 3, EndClient, 0},
		{"exit at once", agentArgv("exit-at-once", "0"), 0, EndAgent, 0},
		{"exit 3 at once", agentArgv("exit-at-once", "3"), 3, EndAgent, 0},
		{"killed by SIGTERM", agentArgv("kill-self", "TERM"), 128 + 15, EndAgent, syscall.SIGTERM},
		{"killed by SIGKILL", agentArgv("kill-self", "KILL"), 128 + 9, EndAgent, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, StdioConfig{Argv: tt.argv})
			if tt.first == EndClient {
				p.stdin.Close()
			}
			res := p.wait(t, stdioWait)
			if res.Exit.Code != tt.code || res.Exit.Signal != tt.signal || res.First != tt.first {
				t.Errorf("result %+v, want code %d, signal %v, first %v", res, tt.code, tt.signal, tt.first)
			}
			if p.err != nil {
				t.Errorf("err = %v", p.err)
			}
			p.rec.check(t, capture.StreamAgent, nil)
		})
	}
}

func TestStdioAgentNotFound(t *testing.T) {
	var stderr bytes.Buffer
	code, err := RunStdio(t.Context(), StdioConfig{Argv: []string{"acpscope-no-such-agent", "--flag"},
		Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr, Signals: make(chan os.Signal)})
	if code != 127 || !errors.Is(err, agent.ErrCannotStart) {
		t.Fatalf("code %d, err %v; want 127 and agent.ErrCannotStart", code, err)
	}
	want := `cannot start agent "acpscope-no-such-agent": executable file not found in $PATH; check the command in your editor's agent config`
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
}

func TestStdioStderrPassthroughAndTap(t *testing.T) {
	lines := []string{"starting agent", "warning: \xff not UTF-8", "", "last line"}
	p := startProxy(t, StdioConfig{}, append([]string{"stderr"}, lines...)...)
	p.stdin.Close()
	res := p.wait(t, stdioWait)
	want := strings.Join(lines, "\n") + "\n"
	if got := p.errBuf.String(); got != want {
		t.Errorf("stderr passed through = %q, want %q", got, want)
	}
	p.rec.check(t, capture.StreamStderr, []byte(want))
	if res.StderrBytes != int64(len(want)) {
		t.Errorf("StderrBytes = %d, want %d", res.StderrBytes, len(want))
	}
}

// TestStdioStdinCloseLadder: an agent that ignores stdin EOF is stopped
// after the grace period, with SIGTERM, or SIGKILL when it ignores that.
func TestStdioStdinCloseLadder(t *testing.T) {
	const grace = 300 * time.Millisecond
	tests := []struct {
		name  string
		mode  []string
		code  int
		after time.Duration
	}{
		{"SIGTERM after grace", []string{"ignore-eof"}, 128 + 15, grace},
		{"SIGKILL after twice grace", []string{"ignore-eof", "--ignore-term"}, 128 + 9, 2 * grace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, StdioConfig{Grace: grace}, tt.mode...)
			p.stdin.Write([]byte("ready?\n"))
			waitForRecorded(t, p.rec, capture.StreamAgent, int64(len("ready?\n"))) // its echo: signals are set up
			start := time.Now()
			p.stdin.Close()
			res := p.wait(t, stdioWait)
			took := time.Since(start)
			if res.Exit.Code != tt.code || res.First != EndClient {
				t.Errorf("result %+v, want code %d, client first", res, tt.code)
			}
			if took < tt.after {
				t.Errorf("stopped %v after stdin closed, before the %v the ladder waits", took, tt.after)
			}
		})
	}
}

// TestStdioSignalForwardedToGroup: a signal to the proxy reaches the agent
// and the child it spawned; the proxy exits with the agent's status.
func TestStdioSignalForwardedToGroup(t *testing.T) {
	p := startProxy(t, StdioConfig{Grace: time.Second}, "spawn-child")
	waitForText(t, p.errBuf, "\n", stdioWait)
	var child int
	if _, err := fmtSscan(p.errBuf.String(), &child); err != nil || child <= 0 {
		t.Fatalf("no child pid in %q: %v", p.errBuf.String(), err)
	}
	p.sigs <- syscall.SIGTERM
	res := p.wait(t, stdioWait)
	if res.Exit.Code != 128+15 || res.First != EndSignal || res.Signal != syscall.SIGTERM {
		t.Errorf("result %+v, want code 143 after a forwarded SIGTERM", res)
	}
	waitGone(t, child)
}

// TestStdioSignalTrapped: the agent sees the very signal we received
// (SIGHUP, SIGINT); one that traps signals and lingers gets SIGTERM after
// the grace period and SIGKILL after another.
func TestStdioSignalTrapped(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			p := startProxy(t, StdioConfig{Grace: 2 * time.Second}, "trap") // room for a loaded machine to say "trap SIGTERM"
			waitForText(t, p.errBuf, "trap ready", stdioWait)
			p.sigs <- sig
			waitForText(t, p.errBuf, "trap "+agent.ExitStatus{Signal: sig}.SignalName(), stdioWait)
			res := p.wait(t, stdioWait)
			if !strings.Contains(p.errBuf.String(), "trap SIGTERM") {
				t.Errorf("the ladder sent no SIGTERM; stderr %q", p.errBuf.String())
			}
			if res.Exit.Code != 128+9 || res.First != EndSignal || res.Signal != sig {
				t.Errorf("result %+v, want SIGKILL death, signal first", res)
			}
		})
	}
}

// TestStdioRealSignal sends SIGHUP to this process: RunStdio's own
// subscription must catch it and pass it on.
func TestStdioRealSignal(t *testing.T) {
	var out, errb testkit.Buffer
	inR, inW := mustPipe(t)
	done := make(chan Result, 1)
	go func() {
		res, _ := Stdio(t.Context(), StdioConfig{Argv: agentArgv("trap"), Stdin: inR, Stdout: &out, Stderr: &errb, Grace: 200 * time.Millisecond})
		done <- res
	}()
	waitForText(t, &errb, "trap ready", stdioWait)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitForText(t, &errb, "trap SIGHUP", stdioWait)
	inW.Close() // the trap agent exits 0 at stdin EOF
	select {
	case res := <-done:
		if res.First != EndSignal || res.Signal != syscall.SIGHUP {
			t.Errorf("result %+v, want a forwarded SIGHUP", res)
		}
	case <-time.After(stdioWait):
		t.Fatalf("proxy did not return within %v", stdioWait)
	}
}

// TestStdioAgentExitsWhileEditorWaits: the agent dies while the editor
// keeps stdin open; the proxy closes stdout and returns anyway.
func TestStdioAgentExitsWhileEditorWaits(t *testing.T) {
	p := startProxy(t, StdioConfig{}, "exit-at-once", "7")
	res := p.wait(t, stdioWait)
	if res.Exit.Code != 7 || res.First != EndAgent {
		t.Errorf("result %+v, want exit 7, agent first", res)
	}
	p.rec.check(t, capture.StreamClient, nil)
	// stdin is still open on the editor's side: writing must not block.
	if _, err := p.stdin.Write([]byte("late\n")); err != nil && !errors.Is(err, syscall.EPIPE) {
		t.Errorf("writing after the end: %v", err)
	}
}

// TestStdioEditorStopsReading: the editor closes our stdout; the agent is
// shut down and the proxy returns.
func TestStdioEditorStopsReading(t *testing.T) {
	p := startProxy(t, StdioConfig{Grace: 200 * time.Millisecond}, "ignore-eof")
	p.stdout.Close()
	go p.stdin.Write([]byte("hello\n"))
	res := p.wait(t, stdioWait)
	if res.First != EndClient || res.StdoutErr == nil {
		t.Errorf("result %+v, want client first with a stdout error", res)
	}
	if res.Exit.Code != 128+15 {
		t.Errorf("exit %d, want 143 (the ladder's SIGTERM)", res.Exit.Code)
	}
}

func TestStdioNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, mode := range [][]string{{"echo"}, {"exit-at-once", "2"}, {"ignore-eof"}, {"stderr", "x"}} {
		inR, inW := mustPipe(t)
		outR, outW := mustPipe(t)
		go func() { // drain: ends at the proxy's close of stdout
			buf := make([]byte, 4096)
			for {
				if _, err := outR.Read(buf); err != nil {
					return
				}
			}
		}()
		inW.Write([]byte("{}\n"))
		inW.Close()
		if _, err := Stdio(t.Context(), StdioConfig{Argv: agentArgv(mode...), Stdin: inR, Stdout: outW, Stderr: &testkit.Buffer{},
			Grace: 100 * time.Millisecond, Recorder: newTestRecorder(), Signals: make(chan os.Signal)}); err != nil {
			t.Fatal(err)
		}
		inR.Close()
		outR.Close()
	}
	deadline := time.Now().Add(stdioWait)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d still %v after:\n%s", before, runtime.NumGoroutine(), stdioWait, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits for pid to be gone or a zombie.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(stdioWait)
	for processLive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still running %v later", pid, stdioWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func processLive(pid int) bool {
	b, err := os.ReadFile("/proc/" + itoa(int64(pid)) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// TestStdioContextCancel: cancelling the caller's context stops the agent
// through the ladder.
func TestStdioContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	inR, _ := mustPipe(t)
	done := make(chan Result, 1)
	go func() {
		res, _ := Stdio(ctx, StdioConfig{Argv: agentArgv("ignore-eof"), Stdin: inR, Stdout: &testkit.Buffer{}, Stderr: &testkit.Buffer{},
			Grace: 100 * time.Millisecond, Signals: make(chan os.Signal)})
		done <- res
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case res := <-done:
		if res.First != EndContext || res.Exit.Code != 128+15 {
			t.Errorf("result %+v, want context first and SIGTERM death", res)
		}
	case <-time.After(stdioWait):
		t.Fatalf("proxy still running %v after its context was cancelled", stdioWait)
	}
}

// TestStdioACPConversation holds a short ACP conversation with the test
// agent through the proxy and checks both what the client received and
// what was recorded each way.
func TestStdioACPConversation(t *testing.T) {
	requests := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"hi"}]}}` + "\n"
	want := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"authMethods":[]}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-1"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":", world"}}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}` + "\n"
	p := startProxy(t, StdioConfig{}, "acp")
	p.stdin.Write([]byte(requests))
	p.stdin.Close()
	res := p.wait(t, stdioWait)
	if res.Exit.Code != 0 {
		t.Errorf("result %+v", res)
	}
	if msg := p.out.diff([]byte(want)); msg != "" {
		t.Errorf("client received: %s\n%s", msg, p.out.head)
	}
	p.rec.check(t, capture.StreamClient, []byte(requests))
	p.rec.check(t, capture.StreamAgent, []byte(want))
}
