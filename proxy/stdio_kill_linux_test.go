package proxy

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/wire"
)

// peerProxy is this test binary run as the proxy process (see runPeer).
type peerProxy struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *testkit.Buffer
}

func startPeerProxy(t *testing.T, capturePath string, agent ...string) *peerProxy {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &peerProxy{cmd: exec.Command(exe, agentArgv(agent...)...), stderr: &testkit.Buffer{}}
	p.cmd.Env = append(os.Environ(), peerEnv+"=proxy", peerCaptureEnv+"="+capturePath, "GORACE=atexit_sleep_ms=0")
	p.cmd.Stderr = p.stderr
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	return p
}

// TestStdioProxyKilledStopsAgent: a proxy killed with SIGKILL cannot stop
// its agent, and an agent that ignores stdin EOF would run on as an
// orphan; the kernel's parent-death signal ends it.
func TestStdioProxyKilledStopsAgent(t *testing.T) {
	p := startPeerProxy(t, "", "pid", "ignore-eof")
	waitForText(t, p.stderr, "\n", stdioWait)
	var pid int
	if _, err := fmt.Sscanf(p.stderr.String(), "pid %d", &pid); err != nil {
		t.Fatalf("no agent pid in %q", p.stderr.String())
	}
	p.cmd.Process.Kill()
	p.cmd.Wait()
	waitGone(t, pid)
}

// TestStdioSIGKILLKeepsCommitted kills the proxy mid-stream with SIGKILL
// and reopens its capture: every line that crossed the proxy well before
// the kill (committed, as its live feed says) is there, byte for byte.
func TestStdioSIGKILLKeepsCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed.acpscope")
	p := startPeerProxy(t, path, "echo")
	const n = 1000
	var sent bytes.Buffer
	for i := range n {
		fmt.Fprintf(&sent, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s","n":"%040d"}}`+"\n", i, i)
	}
	go p.stdin.Write(sent.Bytes())
	back := make([]byte, sent.Len())
	if _, err := io.ReadFull(p.stdout, back); err != nil {
		t.Fatalf("reading the echo: %v; stderr %q", err, p.stderr.String())
	}
	if !bytes.Equal(back, sent.Bytes()) {
		t.Fatal("the echo differs from what was sent")
	}
	waitFeedLast(t, path, 2*n) // every line committed, each way
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()

	r, err := openCapture(t, path)
	if err != nil {
		t.Fatalf("reopening the capture of a killed proxy: %v", err)
	}
	defer r.Close()
	got := map[wire.Dir]*bytes.Buffer{wire.DirClient: {}, wire.DirAgent: {}}
	err = r.Scan(1, func(rec *capture.Record) bool {
		if rec.Parent != 0 || rec.Kind == wire.KindStderr {
			return true
		}
		body, err := r.Body(rec.Seq)
		if err != nil {
			t.Errorf("body %d: %v", rec.Seq, err)
			return false
		}
		got[rec.Dir].Write(body)
		got[rec.Dir].WriteByte('\n')
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, b := range got {
		if !bytes.Equal(b.Bytes(), sent.Bytes()) {
			d := newDigest()
			d.Write(b.Bytes())
			t.Errorf("%v after SIGKILL: %s", dir, d.diff(sent.Bytes()))
		}
	}
}

// waitFeedLast waits until the running proxy's live feed of the capture at
// path has published record last: it is committed.
func waitFeedLast(t *testing.T, path string, last uint64) {
	t.Helper()
	l, err := capture.DialLive(path, last)
	if err != nil {
		t.Fatalf("following the capture: %v", err)
	}
	defer l.Close()
	deadline := time.After(stdioWait)
	for l.Last() < last {
		select {
		case <-l.Updates():
		case <-l.Done():
			t.Fatalf("the feed ended at record %d before %d: %v", l.Last(), last, l.Err())
		case <-deadline:
			t.Fatalf("%d records committed after %v, want %d", l.Last(), stdioWait, last)
		}
	}
}

// openCapture opens a capture; a panic in the store fails the test.
func openCapture(t *testing.T, path string) (r *capture.Reader, err error) {
	t.Helper()
	return capture.Open(path)
}
