package proxy

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// TestStdioCaptureEndToEnd runs the proxy with a real capture.Writer,
// reopens the capture, and rebuilds each stream from its records: every
// frame must be stored byte for byte, in order, with nothing lost.
func TestStdioCaptureEndToEnd(t *testing.T) {
	for i, tc := range streamCases() {
		if len(tc.data) > 1<<20 && (testing.Short() || raceEnabled) {
			t.Logf("%s: skipped under -race or -short (the transparency test covers it; run without -race for the capture of it)", tc.name)
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.acpscope")
			w := createTestCapture(t, path)
			p := startProxyRecording(t, w, "stderr", "agent log line", "second \xff line")
			werr := make(chan error, 1)
			go func() { werr <- writeChunks(p.stdin, tc.data, uint64(i)) }()
			res := p.wait(t, stdioWait)
			if err := <-werr; err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("closing the capture: %v", err)
			}
			if res.Exit.Code != 0 {
				t.Fatalf("result %+v", res)
			}
			if msg := p.out.diff(tc.data); msg != "" {
				t.Errorf("stdout: %s", msg)
			}
			streams := readStreams(t, path)
			for _, s := range []struct {
				name string
				got  []byte
				want []byte
			}{
				{"client→agent", streams[capture.StreamClient], tc.data},
				{"agent→client", streams[capture.StreamAgent], tc.data},
				{"stderr", streams[capture.StreamStderr], []byte("agent log line\nsecond \xff line\n")},
			} {
				if !bytes.Equal(s.got, s.want) {
					d := newDigest()
					d.Write(s.got)
					t.Errorf("%s rebuilt from the capture: %s", s.name, d.diff(s.want))
				}
			}
		})
	}
}

// createTestCapture creates a capture; a panic in the store fails the test.
func createTestCapture(t *testing.T, path string) *capture.Writer {
	t.Helper()
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true,
		Meta: capture.Meta{Transport: "stdio", Agent: "testagent"}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// startProxyRecording is startProxy with w as the Recorder.
func startProxyRecording(t *testing.T, w *capture.Writer, mode ...string) *proxyRun {
	t.Helper()
	return startProxyWith(t, StdioConfig{}, w, mode...)
}

// readStreams rebuilds the three streams from a capture: top-level
// records in sequence order, each followed by its newline unless it was a
// final partial line. Batch members are parts of their batch and skipped.
func readStreams(t *testing.T, path string) map[capture.Stream][]byte {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if l := r.Meta().Loss; l.Messages != 0 || l.Bytes != 0 || l.WriteErrors != 0 {
		t.Errorf("capture lost %+v", l)
	}
	out := map[capture.Stream]*bytes.Buffer{}
	for _, s := range []capture.Stream{capture.StreamClient, capture.StreamAgent, capture.StreamStderr} {
		out[s] = &bytes.Buffer{}
	}
	var scanErr error
	err = r.Scan(1, func(rec *capture.Record) bool {
		if rec.Parent != 0 {
			return true
		}
		body, err := r.Body(rec.Seq)
		if err != nil {
			scanErr = fmt.Errorf("body of record %d: %w", rec.Seq, err)
			return false
		}
		if int64(len(body)) != rec.Size {
			scanErr = fmt.Errorf("record %d: size %d, body %d bytes", rec.Seq, rec.Size, len(body))
			return false
		}
		s := capture.StreamAgent
		switch {
		case rec.Kind == wire.KindStderr:
			s = capture.StreamStderr
		case rec.Dir == wire.DirClient:
			s = capture.StreamClient
		}
		out[s].Write(body)
		if rec.Flags&wire.FlagPartial == 0 {
			out[s].WriteByte('\n')
		}
		return true
	})
	if err == nil {
		err = scanErr
	}
	if err != nil {
		t.Fatal(err)
	}
	res := map[capture.Stream][]byte{}
	for s, b := range out {
		res[s] = b.Bytes()
	}
	return res
}
