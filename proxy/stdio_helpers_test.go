package proxy

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/internal/testkit"
)

// digest is a streaming summary of bytes: length and SHA-256, plus the
// bytes themselves while they are small enough to show in a failure.
type digest struct {
	n    int64
	h    hash.Hash
	head []byte
}

const keepBytes = 1 << 20

func newDigest() *digest { return &digest{h: sha256.New()} }

func (d *digest) Write(b []byte) (int, error) {
	d.n += int64(len(b))
	d.h.Write(b)
	if len(d.head) < keepBytes {
		d.head = append(d.head, b[:min(len(b), keepBytes-len(d.head))]...)
	}
	return len(b), nil
}

func (d *digest) sum() [32]byte { return [32]byte(d.h.Sum(nil)) }

// equal reports whether d saw exactly b, and says how it differs if not.
func (d *digest) diff(b []byte) string {
	if d.n == int64(len(b)) && d.sum() == sha256.Sum256(b) {
		return ""
	}
	i := 0
	for i < len(d.head) && i < len(b) && d.head[i] == b[i] {
		i++
	}
	return "got " + itoa(d.n) + " bytes, want " + itoa(int64(len(b))) + "; first difference at byte " + itoa(int64(i)) + quoteAround(d.head, b, i)
}

func quoteAround(got, want []byte, i int) string {
	cut := func(b []byte) string {
		lo, hi := max(0, i-16), min(len(b), i+16)
		if lo > hi {
			return ""
		}
		return string(b[lo:hi])
	}
	return ": got …" + strings.ToValidUTF8(cut(got), "?") + "… want …" + strings.ToValidUTF8(cut(want), "?") + "…"
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// testRecorder is a Recorder that digests each stream and checks the
// contract the proxy promises: chunks never after a stream's end, one end
// per stream, never an empty chunk.
type testRecorder struct {
	tap.Discard // the stdio proxy records no frames

	mu      sync.Mutex
	streams map[capture.Stream]*digest
	chunks  map[capture.Stream]int
	ends    map[capture.Stream]int
	faults  []string
}

func newTestRecorder() *testRecorder {
	return &testRecorder{streams: map[capture.Stream]*digest{}, chunks: map[capture.Stream]int{}, ends: map[capture.Stream]int{}}
}

func (r *testRecorder) Chunk(conn uint32, s capture.Stream, t int64, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ends[s] > 0 {
		r.faults = append(r.faults, "chunk after the end of stream "+itoa(int64(s)))
	}
	if len(b) == 0 || t <= 0 {
		r.faults = append(r.faults, "empty chunk or no time")
	}
	if r.streams[s] == nil {
		r.streams[s] = newDigest()
	}
	r.streams[s].Write(b)
	r.chunks[s]++
}

func (r *testRecorder) EndStream(conn uint32, s capture.Stream, t int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends[s]++
}

// check fails t unless stream s saw exactly want and ended once.
func (r *testRecorder) check(t *testing.T, s capture.Stream, want []byte) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.streams[s]
	if d == nil {
		d = newDigest()
	}
	if msg := d.diff(want); msg != "" {
		t.Errorf("recorder stream %d: %s", s, msg)
	}
	if r.ends[s] != 1 {
		t.Errorf("recorder stream %d ended %d times, want once", s, r.ends[s])
	}
	for _, f := range r.faults {
		t.Error("recorder:", f)
	}
}

// stdioWait bounds every wait for a process, a pump or a line in these
// tests: generous, since the machines they run on are shared and busy; a
// passing wait returns as soon as its condition holds.
const stdioWait = 2 * time.Minute

// waitForText polls until the buffer contains s.
func waitForText(t *testing.T, b *testkit.Buffer, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %v; have %q", s, timeout, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// proxyRun is one RunStdio in the background, wired to real pipes: the
// test writes the editor's stdin and reads its stdout and stderr.
type proxyRun struct {
	stdin  *os.File // write end: the editor's side of our stdin
	stdout *os.File // read end of our stdout
	out    *digest  // what came out of stdout, once outDone is closed
	errBuf *testkit.Buffer
	rec    *testRecorder
	sigs   chan os.Signal

	outDone chan struct{}
	done    chan struct{}
	res     Result
	err     error
}

// startProxy runs the proxy with the test agent in mode. cfg's pipes,
// Recorder (a testRecorder) and Signals are filled in.
func startProxy(t *testing.T, cfg StdioConfig, mode ...string) *proxyRun {
	t.Helper()
	return startProxyWith(t, cfg, nil, mode...)
}

// startProxyWith is startProxy recording into rec instead, when not nil.
func startProxyWith(t *testing.T, cfg StdioConfig, rec tap.Recorder, mode ...string) *proxyRun {
	t.Helper()
	p := &proxyRun{out: newDigest(), errBuf: &testkit.Buffer{}, rec: newTestRecorder(), sigs: make(chan os.Signal, 1),
		outDone: make(chan struct{}), done: make(chan struct{})}
	inR, inW := mustPipe(t)
	outR, outW := mustPipe(t)
	errR, errW := mustPipe(t)
	p.stdin, p.stdout = inW, outR
	if cfg.Argv == nil {
		cfg.Argv = agentArgv(mode...)
	}
	cfg.Stdin, cfg.Stdout, cfg.Stderr = inR, outW, errW
	cfg.Recorder, cfg.Signals = p.rec, p.sigs
	if rec != nil {
		cfg.Recorder = rec
	}
	go func() { // stdout reader: ends at EOF, when the proxy closes stdout
		io.Copy(p.out, outR)
		close(p.outDone)
	}()
	errDone := make(chan struct{})
	go func() { // stderr reader: ends when errW is closed below
		io.Copy(p.errBuf, errR)
		close(errDone)
	}()
	go func() { // the proxy
		p.res, p.err = Stdio(t.Context(), cfg)
		inR.Close()
		errW.Close()
		<-errDone
		errR.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		select {
		case <-p.done:
		case <-time.After(stdioWait):
			t.Errorf("proxy still running %v after the test", stdioWait)
		}
	})
	return p
}

// wait waits for the proxy to return.
func (p *proxyRun) wait(t *testing.T, timeout time.Duration) Result {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("proxy did not return within %v", timeout)
	}
	<-p.outDone
	p.stdout.Close()
	return p.res
}

func mustPipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// seen returns how many bytes stream s has recorded so far.
func (r *testRecorder) seen(s capture.Stream) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.streams[s]; d != nil {
		return d.n
	}
	return 0
}

// fmtSscan reads "child PID" from the first line.
func fmtSscan(s string, pid *int) (int, error) {
	return fmt.Sscanf(s, "child %d", pid)
}
