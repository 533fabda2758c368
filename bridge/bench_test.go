package bridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// roundTripper sends one line and waits for the agent's answer.
type roundTripper struct {
	in  io.Writer
	out *bufio.Reader
}

func (r *roundTripper) roundTrip(b *testing.B, line []byte) {
	if _, err := r.in.Write(line); err != nil {
		b.Fatal(err)
	}
	if _, err := r.out.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkServeConnectAgainstDirect times request round trips to the test
// agent (a request it does not know, answered with a short -32601) over
// its own pipes, and through connect and serve: the editor's line goes
// through connect, over Streamable HTTP or a WebSocket, through serve to
// the agent's stdio and back, both hops recording into real captures. Each route
// runs in the same benchmark run as the direct pipes, and it reports the
// ratio, so both hops' cost is read against the agent alone.
func BenchmarkServeConnectAgainstDirect(b *testing.B) {
	for _, size := range []int{200, 16 << 10} {
		line := []byte(`{"jsonrpc":"2.0","id":7,"method":"_bench/ping","params":{"pad":"` + strings.Repeat("x", size) + `"}}` + "\n")
		for _, route := range []string{"http", "ws"} {
			b.Run(fmt.Sprintf("%s/request=%dB", route, size), func(b *testing.B) {
				direct := startDirect(b)
				bridged := startBridged(b, route)
				var tDirect, tBridged time.Duration
				b.ResetTimer()
				for range b.N {
					t0 := time.Now()
					direct.roundTrip(b, line)
					t1 := time.Now()
					bridged.roundTrip(b, line)
					tDirect += t1.Sub(t0)
					tBridged += time.Since(t1)
				}
				b.ReportMetric(float64(tBridged)/float64(b.N)/1e3, "bridged-µs/op")
				b.ReportMetric(float64(tDirect)/float64(b.N)/1e3, "direct-µs/op")
				b.ReportMetric(float64(tBridged)/float64(tDirect), "bridged/direct")
			})
		}
	}
}

// startDirect runs the test agent on plain pipes, initialized.
func startDirect(b *testing.B) *roundTripper {
	cmd := exec.Command(testAgent, "acp")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	rt := &roundTripper{in: in, out: bufio.NewReaderSize(out, 64<<10)}
	rt.roundTrip(b, initializeLine)
	return rt
}

// initializeLine opens a benchmark's conversation with the test agent.
var initializeLine = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}` + "\n")

// startBridged runs connect to serve over route, initialized; both
// record into real captures.
func startBridged(b *testing.B, route string) *roundTripper {
	f := startServe(b, netkit.H1, func(o *ServeOptions) { o.Recorder = captureFor(b) })
	rt := connectURL(b, route+f.url[strings.Index(f.url, ":"):])
	rt.roundTrip(b, initializeLine)
	return rt
}

// connectURL runs acpscope connect, recording, to the endpoint url.
func connectURL(b *testing.B, url string) *roundTripper {
	stdinR, stdinW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Connect(context.Background(), ConnectOptions{URL: url, Stdin: stdinR, Stdout: outW, Recorder: captureFor(b)})
		outW.Close()
	}()
	b.Cleanup(func() {
		stdinW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	return &roundTripper{in: stdinW, out: bufio.NewReaderSize(outR, 64<<10)}
}

// captureFor is a real capture writer (fsync on) in b's temporary
// directory, closed when b ends: what a run of connect or serve records.
func captureFor(b *testing.B) *capture.Writer {
	w, err := capture.Create(filepath.Join(b.TempDir(), "bench"+capture.Ext), capture.WriterOptions{NoFeed: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	return w
}
