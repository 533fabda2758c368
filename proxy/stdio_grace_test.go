package proxy

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit"
)

// TestStdioSlowReaderAfterEOF: the editor closes stdin at once, then reads
// a large answer far more slowly than the grace period. The agent is
// writing all along, so it is never stopped: every byte arrives and the
// agent's own exit status comes back. (The grace once counted from stdin
// EOF alone: such an editor got a megabyte and exit 143.)
func TestStdioSlowReaderAfterEOF(t *testing.T) {
	// The grace leaves room for an agent starved of CPU on a loaded
	// machine; the editor reads for over 5 s, past the ladder's SIGTERM
	// had the grace counted from EOF.
	const (
		grace       = 2 * time.Second
		lines, size = 128, 64 << 10 // 8 MiB
		readSize    = 32 << 10
		pause       = 20 * time.Millisecond
	)
	inR, inW := mustPipe(t)
	outR, outW := mustPipe(t)
	inW.Close()
	rec := newTestRecorder()
	var errb testkit.Buffer
	done := make(chan Result, 1)
	go func() { // the proxy
		res, _ := Stdio(t.Context(), StdioConfig{Argv: agentArgv("burst", strconv.Itoa(lines), strconv.Itoa(size)),
			Stdin: inR, Stdout: outW, Stderr: &errb, Grace: grace, Recorder: rec, Signals: make(chan os.Signal)})
		done <- res
	}()
	got := newDigest()
	var all bytes.Buffer
	buf := make([]byte, readSize)
	for { // the slow editor
		n, err := outR.Read(buf)
		got.Write(buf[:n])
		all.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the proxy's stdout: %v", err)
		}
		time.Sleep(pause)
	}
	var res Result
	select {
	case res = <-done:
	case <-time.After(stdioWait):
		t.Fatalf("the proxy did not return within %v of its stdout ending", stdioWait)
	}
	if got.n != lines*size || bytes.Count(all.Bytes(), []byte("\n")) != lines {
		t.Fatalf("the editor read %d bytes in %d lines, want %d in %d; stderr %q", got.n, bytes.Count(all.Bytes(), []byte("\n")), lines*size, lines, errb.String())
	}
	if res.Exit.Code != 0 || res.Exit.Signal != 0 {
		t.Errorf("exit %d (signal %v), want the agent's 0: it was stopped while still writing", res.Exit.Code, res.Exit.Signal)
	}
	if res.First != EndClient || res.AgentBytes != lines*size {
		t.Errorf("result %+v, want the client first and %d agent bytes", res, lines*size)
	}
	rec.check(t, capture.StreamAgent, all.Bytes())
}

// TestStdioGraceCountsFromLastOutput: after stdin EOF the agent goes on
// writing to stderr for longer than the grace period (3 s, a line every
// 100 ms), then falls silent without exiting. It is not stopped while it
// talks; once silent it gets the grace, then SIGTERM (or SIGKILL when it
// ignores SIGTERM).
func TestStdioGraceCountsFromLastOutput(t *testing.T) {
	const grace, talk = 2 * time.Second, 30
	tests := []struct {
		name string
		mode []string
		code int
	}{
		{"SIGTERM", []string{"talk", strconv.Itoa(talk), "100"}, 128 + int(syscall.SIGTERM)},
		{"SIGKILL", []string{"talk", strconv.Itoa(talk), "100", "--ignore-term"}, 128 + int(syscall.SIGKILL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, StdioConfig{Grace: grace}, tt.mode...)
			p.stdin.Write([]byte("ready\n"))
			waitForRecorded(t, p.rec, capture.StreamAgent, int64(len("ready\n"))) // signals are set up
			p.stdin.Close()
			res := p.wait(t, stdioWait)
			if res.Exit.Code != tt.code || res.First != EndClient {
				t.Errorf("result %+v, want code %d, client first", res, tt.code)
			}
			var want strings.Builder
			for i := 1; i <= talk; i++ {
				fmt.Fprintf(&want, "talk %d\n", i)
			}
			if got := p.errBuf.String(); got != want.String() {
				t.Errorf("stderr %q, want all %d lines: the agent was stopped while it was talking", got, talk)
			}
		})
	}
}

// TestStdioSignalStopsTalkingAgent: an agent that talks forever after
// stdin EOF and ignores SIGTERM still goes when the editor sends a signal:
// the wait for silence gives way to the ladder.
func TestStdioSignalStopsTalkingAgent(t *testing.T) {
	p := startProxy(t, StdioConfig{Grace: time.Second}, "talk", "0", "20", "--ignore-term")
	p.stdin.Close()
	waitForText(t, p.errBuf, "talk 5\n", stdioWait)
	p.sigs <- syscall.SIGTERM
	res := p.wait(t, stdioWait)
	if res.Exit.Code != 128+int(syscall.SIGKILL) || res.First != EndClient || res.Signal != syscall.SIGTERM {
		t.Errorf("result %+v, want SIGKILL after the forwarded SIGTERM, client first", res)
	}
}

// waitForRecorded waits until the recorder has seen n bytes of stream s.
func waitForRecorded(t *testing.T, r *testRecorder, s capture.Stream, n int64) {
	t.Helper()
	deadline := time.Now().Add(stdioWait)
	for r.seen(s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("stream %d recorded %d bytes in %v, want %d", s, r.seen(s), stdioWait, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
