package fault_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/proxy"
)

// testAgent is the repository's test agent, built once for the package.
var testAgent string

func TestMain(m *testing.M) {
	path, cleanup, err := netkit.BuildTestAgent()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testAgent = path
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// waitLimit bounds every wait on a condition: the machine is shared.
const waitLimit = 90 * time.Second

// run is one stdio proxy run of the echo test agent under an engine.
type run struct {
	t       *testing.T
	path    string // the capture
	w       *capture.Writer
	in      *io.PipeWriter // the editor's side of the proxy's stdin
	out     testkit.Buffer // what the editor received
	engine  *fault.Engine
	done    chan proxy.Result
	control *fault.Control
}

// start runs `acpscope -- testagent echo` with opts (Plan parsed from
// plan when non-empty) in a private capture directory.
func start(t *testing.T, plan string, opts fault.Options) *run {
	t.Helper()
	if plan != "" {
		p, err := fault.Parse("test.yaml", []byte(plan))
		if err != nil {
			t.Fatal(err)
		}
		opts.Plan = p
	}
	dir, err := os.MkdirTemp("", "acpsf") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &run{t: t, path: filepath.Join(dir, "c.acpscope"), done: make(chan proxy.Result, 1)}
	r.w, err = capture.Create(r.path, capture.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.engine = fault.New(opts)
	if opts.AllowIntercept {
		ln, _, err := capture.ListenControl(r.path, func(s string) { t.Log(s) })
		if err != nil {
			t.Fatal(err)
		}
		r.control = fault.Serve(r.engine, ln)
	}
	stdin, in := io.Pipe()
	r.in = in
	cfg := proxy.StdioConfig{Argv: []string{testAgent, "echo"}, Stdin: stdin, Stdout: &r.out, Stderr: io.Discard,
		Recorder: r.w, Intercept: r.engine, Grace: 5 * time.Second, Signals: make(chan os.Signal)}
	go func() { // the proxy run: ends when the agent has exited
		res, _ := proxy.Stdio(context.Background(), cfg)
		r.done <- res
	}()
	t.Cleanup(func() { in.Close() })
	return r
}

// send writes lines to the proxy as the editor.
func (r *run) send(lines ...string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, strings.Join(lines, "\n")+"\n"); err != nil {
		r.t.Fatalf("writing to the proxy: %v", err)
	}
}

// waitOut waits until the editor has received n lines.
func (r *run) waitOut(n int) []string {
	r.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		got := lines(r.out.String())
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the editor received %d lines, want %d: %q", len(got), n, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// finish closes the editor's side, waits for the run and returns what
// the editor received and the capture's records with their bodies.
func (r *run) finish() (proxy.Result, []string, []capture.Record) {
	r.t.Helper()
	r.in.Close()
	return r.wait()
}

// wait waits for the run to end on its own.
func (r *run) wait() (proxy.Result, []string, []capture.Record) {
	r.t.Helper()
	var res proxy.Result
	select {
	case res = <-r.done:
	case <-time.After(waitLimit):
		r.t.Fatal("the proxy run did not end")
	}
	r.engine.Close()
	if r.control != nil {
		r.control.Close()
	}
	if err := r.w.Close(); err != nil {
		r.t.Fatal(err)
	}
	return res, lines(r.out.String()), readCapture(r.t, r.path)
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func readCapture(t *testing.T, path string) []capture.Record {
	t.Helper()
	rd, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var recs []capture.Record
	err = rd.Scan(1, func(rec *capture.Record) bool {
		recs = append(recs, *rec)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if recs[i].Body, err = rd.Body(recs[i].Seq); err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

// summary renders records as "dir body [stage action rule]" lines.
func summary(recs []capture.Record) []string {
	var out []string
	for _, r := range recs {
		s := r.Dir.String() + " " + string(r.Body)
		if f := r.Fault; f != nil {
			by := f.Rule
			if by == "" {
				by = f.By
			}
			s += " [" + f.Stage + " " + f.Action + " " + by + "]"
		}
		out = append(out, s)
	}
	return out
}
