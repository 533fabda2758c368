package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit/jaegerkit"
)

// BenchmarkOTLP measures what --otlp costs the forwarding path: the stdio
// proxy with capture alone against capture plus --otlp to a local
// backend (Jaeger when ACPSCOPE_JAEGER names one, else a loopback sink
// that takes every request), in one run, setups alternating:
//   - RTT of prompt turns (the test agent's acp mode answers each
//     session/prompt with two chunks and end_turn: one span per trip);
//   - msgs/s of a burst of notifications, agent to client, flat out;
//   - a burst paced at 100 000 msgs/s, which both must keep.
//
// Run it alone, once: go test -run XXX -bench OTLP -benchtime 1x ./internal/cli
func BenchmarkOTLP(b *testing.B) {
	otlp, backend := benchBackend(b)
	setups := []struct{ name, otlp string }{{"capture", ""}, {"capture+otlp", otlp}}
	const reps, warm, trips, burstN, pacedN, pace = 3, 300, 3000, 200_000, 300_000, 100_000
	for range b.N {
		rtt := make([][]time.Duration, 2)
		rates := make([][]float64, 2)
		paced := make([][]float64, 2)
		notes := make([]string, 2)
		for range reps {
			for i, s := range setups {
				rtt[i] = append(rtt[i], benchTrips(b, s.otlp, warm, trips)...)
				r, n := benchBurst(b, s.otlp, "burst", strconv.Itoa(burstN), "200")
				rates[i] = append(rates[i], r)
				notes[i] = n
				r, _ = benchBurst(b, s.otlp, "burst", strconv.Itoa(pacedN), "200", strconv.Itoa(pace))
				paced[i] = append(paced[i], r)
			}
		}
		p := func(i int, q float64) time.Duration {
			d := slices.Clone(rtt[i])
			slices.Sort(d)
			return d[int(q*float64(len(d)-1))]
		}
		fmt.Printf("\nOTLP overhead, backend %s (%d reps, setups alternating)\n", backend, reps)
		fmt.Printf("%-14s %10s %10s %12s %14s   %s\n", "setup", "RTT p50", "RTT p99", "msgs/s", "paced 100k/s", "spans")
		for i, s := range setups {
			fmt.Printf("%-14s %10v %10v %12.0f %14.0f   %s\n", s.name, p(i, 0.5).Round(time.Microsecond), p(i, 0.99).Round(time.Microsecond),
				median(rates[i]), median(paced[i]), notes[i])
		}
		fmt.Printf("ratios: RTT p50 %.3f×, RTT p99 %.3f×, msgs/s %.3f×, paced %.3f×\n",
			float64(p(1, 0.5))/float64(p(0, 0.5)), float64(p(1, 0.99))/float64(p(0, 0.99)),
			median(rates[1])/median(rates[0]), median(paced[1])/median(paced[0]))
		b.ReportMetric(float64(p(1, 0.5))/float64(p(0, 0.5)), "rtt-p50-ratio")
		b.ReportMetric(median(rates[1])/median(rates[0]), "msgs/s-ratio")
		b.ReportMetric(median(paced[1])/median(paced[0]), "paced-ratio")
	}
}

// benchBackend starts the backend spans go to.
func benchBackend(b *testing.B) (url, name string) {
	if os.Getenv("ACPSCOPE_JAEGER") != "" {
		j := jaegerkit.Start(b)
		return "http://" + j.OTLPHTTP, "Jaeger v2 (in-memory storage)"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(srv.Close)
	return srv.URL, "a loopback sink that takes every request (set ACPSCOPE_JAEGER for Jaeger)"
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// otlpBenchProxy starts the stdio proxy around the test agent in mode, with
// capture and, when otlp is set, --otlp.
func otlpBenchProxy(b *testing.B, otlp string, mode ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader, string) {
	path := filepath.Join(b.TempDir(), "bench.acpscope")
	args := []string{"--quiet", "--capture", path}
	if otlp != "" {
		args = append(args, "--otlp", otlp)
	}
	cmd := cliCommand(append(append(args, "--", testagentBin), mode...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return cmd, stdin, bufio.NewReaderSize(stdout, 1<<20), path
}

// benchTrips makes warm untimed and n timed prompt turns.
func benchTrips(b *testing.B, otlp string, warm, n int) []time.Duration {
	cmd, stdin, stdout, _ := otlpBenchProxy(b, otlp, "acp")
	times := make([]time.Duration, 0, n)
	for i := range warm + n {
		req := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}`+"\n", i)
		want := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result"`, i)
		start := time.Now()
		if _, err := stdin.Write(req); err != nil {
			b.Fatalf("trip %d: %v", i, err)
		}
		for {
			line, err := stdout.ReadSlice('\n')
			if err != nil {
				b.Fatalf("trip %d: %v", i, err)
			}
			if bytes.HasPrefix(line, want) {
				break
			}
		}
		if i >= warm {
			times = append(times, time.Since(start))
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("proxy: %v", err)
	}
	return times
}

// benchBurst reads a burst through the proxy and returns its rate in
// lines per second, from its first line to its last, and the capture's
// note on spans.
func benchBurst(b *testing.B, otlp string, mode ...string) (float64, string) {
	cmd, stdin, stdout, path := otlpBenchProxy(b, otlp, mode...)
	var lines int
	var first time.Time
	for {
		_, err := stdout.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			break
		}
		if lines == 0 {
			first = time.Now()
		}
		lines++
	}
	d := time.Since(first)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("proxy: %v", err)
	}
	want, _ := strconv.Atoi(mode[1])
	if lines != want {
		b.Fatalf("%d lines through the proxy, want %d", lines, want)
	}
	note := ""
	if otlp != "" {
		note = captureNotes(b, path)["otlp.spans"]
	}
	return float64(lines-1) / d.Seconds(), note
}
