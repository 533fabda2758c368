package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// benchConfig runs (d) as this test binary re-executed as the proxy
// (see runPeer), with a real capture.Writer and fsync on.
func benchConfig(tb testing.TB) Config {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return Config{
		Agent: agentArgv(),
		Proxy: func(path string, agent []string) *exec.Cmd {
			cmd := exec.Command(exe, agent...)
			cmd.Env = append(os.Environ(), peerEnv+"=proxy", peerCaptureEnv+"="+path)
			if raceEnabled { // the race runtime sleeps 1 s at exit by default
				cmd.Env = append(cmd.Env, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
			}
			return cmd
		},
		Dir: tb.TempDir(),
	}.withDefaults()
}

// BenchmarkStdio measures each setup on each workload: round trips
// (b.N pairs of 200 B), 200 B lines (b.N of them, agent to client), 10 MB
// lines (b.N of them) and, for setups with a middle process, the peak RSS
// while forwarding one 100 MiB line.
func BenchmarkStdio(b *testing.B) {
	cfg := benchConfig(b)
	setups, err := benchSetups(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range setups {
		b.Run(s.key+"/rtt", func(b *testing.B) { benchRTT(b, s, cfg.MsgSize) })
		b.Run(s.key+"/msgs", func(b *testing.B) { benchBurst(b, s, cfg.MsgSize) })
		b.Run(s.key+"/10MB", func(b *testing.B) { benchBurst(b, s, 10_000_000) })
		if s.middle {
			b.Run(s.key+"/rss100MiB", func(b *testing.B) { benchRSS(b, s) })
		}
	}
}

func benchRTT(b *testing.B, s *benchSetup, size int) {
	m, err := s.run(b.Context(), "rtt", "echo")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	p, err := measureRTT(m, b.N, size)
	b.StopTimer()
	if err = m.finish(err); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(p.P50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(p.P99.Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(p.P999.Nanoseconds()), "p99.9-ns")
	reportRun(b, m)
}

func benchBurst(b *testing.B, s *benchSetup, size int) {
	r, err := s.burst(b.Context(), "burst", b.N, size, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.linesPerS(), "msgs/s")
	b.ReportMetric(r.mbPerS(), "MB/s")
	b.ReportMetric(float64(r.lost), "wire-loss")
	reportRun(b, r.run)
}

func benchRSS(b *testing.B, s *benchSetup) {
	row := &Row{CaptureLoss: -1}
	for range b.N {
		r, err := s.burst(b.Context(), "rss", 1, 100<<20, 0)
		if err != nil {
			b.Fatal(err)
		}
		row.note(r.run)
	}
	reportRow(b, row)
}

func reportRun(b *testing.B, m *benchRun) {
	row := &Row{CaptureLoss: -1}
	row.note(m)
	reportRow(b, row)
}

func reportRow(b *testing.B, row *Row) {
	if row.PeakRSS > 0 {
		b.ReportMetric(float64(row.PeakRSS)/(1<<20), "peak-RSS-MiB")
	}
	if row.CaptureLoss >= 0 {
		b.ReportMetric(float64(row.CaptureLoss), "capture-loss")
	}
	if row.CaptureNote != "" {
		b.Log(row.CaptureNote)
	}
}

// BenchmarkStdioTable runs the whole comparison once, at reduced sizes,
// and logs the table with ratios against the minimal forwarder.
func BenchmarkStdioTable(b *testing.B) {
	cfg := benchConfig(b)
	cfg.MsgCount, cfg.BigCount = 200000, 5
	for range b.N {
		rep, err := Run(b.Context(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		var sb strings.Builder
		rep.Print(&sb)
		b.Log("\n" + sb.String())
	}
}

// TestBenchSmoke runs every setup at tiny sizes, so the harness itself is
// tested: every row measured, nothing lost, the table printed.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs seven process pipelines")
	}
	cfg := benchConfig(t)
	cfg.RTTCount, cfg.RTTRuns, cfg.MsgCount, cfg.BigCount, cfg.BigSize, cfg.RSSSize = 50, 2, 2000, 2, 1<<20, 4<<20
	cfg.PacedMsgRate, cfg.PacedMBRate, cfg.PacedBigCount = 20000, 20, 4
	cfg.EchoSizes, cfg.SyncProbeBytes = []int{3 << 20}, 4<<20
	if raceEnabled { // the proxy process is this race-instrumented binary
		cfg.BigSize, cfg.RSSSize, cfg.EchoSizes = 64<<10, 256<<10, []int{512 << 10}
	}
	cfg.Setups = []string{"a", "b", "c", "d", "e", "f"}
	cfg.Peers = []string{"env ACPSCOPE_BENCH_PEER=1"} // "another proxy" that is no proxy at all
	rep, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if row.Err != nil || row.Loss != 0 || row.RTT.N != 100 || len(row.RTTRuns) != 2 || row.MsgsPerS <= 0 || row.MBPerS <= 0 ||
			row.CPUPerM <= 0 || len(row.Echo) != 1 || row.Echo[0] <= 0 {
			t.Errorf("%s: %+v", row.Name, row)
		}
		if (row.Key == "d" || row.Key == "f") && row.CaptureLoss != 0 {
			t.Errorf("%s: capture loss %d (%s)", row.Name, row.CaptureLoss, row.CaptureNote)
		}
		if (row.Key == "b" || row.Key == "d" || row.Key == "f") && len(row.Paced) != 2 {
			t.Errorf("%s: %d paced runs, want 2", row.Name, len(row.Paced))
		}
	}
	var sb strings.Builder
	rep.Print(&sb)
	if len(rep.Rows) != 7 || rep.Rows[6].Name != "(p1) env ACPSCOPE_BENCH_PEER=1" {
		t.Errorf("the peer setup is missing: %d rows", len(rep.Rows))
	}
	if rep.DiskMBPerS <= 0 || rep.DiskErr != nil {
		t.Errorf("synced write rate %v, %v", rep.DiskMBPerS, rep.DiskErr)
	}
	if rep.FaultCost <= 0 || rep.FaultErr != nil {
		t.Errorf("page-fault cost %v, %v", rep.FaultCost, rep.FaultErr)
	}
	if runtime.GOOS == "linux" && !strings.Contains(sb.String(), "% busy") {
		t.Errorf("paced runs lack how busy the CPUs were:\n%s", sb.String())
	}
	for _, want := range []string{"(a) direct pipe", "(b) minimal forwarder", "(d) acpscope, capture on", "(f) forwarder + synced file", "targets", "paced at 20k msgs/s",
		"where capture keeps up: ", "at 20k msgs/s of", "at 20 MB/s of", "flat out, 2000 × 200 B lines", "RTT p50 ≤ 1.1× in ", "of 2 runs",
		"line echoed", "CPU s/M msgs", "synced write rate", "µs to fault in each 4 KiB page", "CPU ", "(p1) env ACPSCOPE_BENCH_PEER=1",
		"round trips over 1ms: (a) direct pipe ", " of 100; (b) minimal forwarder "} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, sb.String())
		}
	}
}

// TestBenchTargetsWithoutPacedRuns: with the paced runs skipped, the
// forwarding target is reported as not measured rather than left out.
func TestBenchTargetsWithoutPacedRuns(t *testing.T) {
	rep := &Report{Rows: []*Row{
		{Key: "b", Name: "(b) minimal forwarder", MsgsPerS: 3e6, MBPerS: 800, CaptureLoss: -1},
		{Key: "d", Name: "(d) acpscope, capture on", MsgsPerS: 2e6, MBPerS: 400},
	}}
	var sb strings.Builder
	rep.Print(&sb)
	if !strings.Contains(sb.String(), "n/a  forwarding ≥ 0.8× the forwarder where capture keeps up: not measured") {
		t.Errorf("targets without paced runs:\n%s", sb.String())
	}
}

// TestBenchPacedTargets: a paced run counts for the zero-loss and
// forwarding targets only if it sent more than the capture queue holds;
// a shorter one is recorded whole whatever the disk does, so its "no
// loss" shows nothing.
func TestBenchPacedTargets(t *testing.T) {
	big := int64(capture.DefaultQueueBytes) + 1
	tests := []struct {
		name      string
		sent      int64
		lost      int64
		busy      float64
		backlog   int64
		want, not []string
	}{
		{"more than the queue, nothing lost", big, 0, 0.97, 0,
			[]string{"ok   zero loss at 500k msgs/s: paced at 500k msgs/s", "ok   forwarding ≥ 0.8×", "all CPUs 97% busy"}, []string{"not shown", "short of CPU", "behind by"}},
		{"nothing lost, capture behind and caught up", big, 0, 0.8, 100 << 20,
			[]string{"ok   zero loss at 500k msgs/s", "capture loss 0, behind by up to 100 MiB on disk, recorded 450ms after the last line"}, []string{"MISS"}},
		{"more than the queue, lines lost", big, 7, 0.5, 0,
			[]string{"MISS zero loss at 500k msgs/s: paced at 500k msgs/s", "capture loss 7", "but capture lost messages there", "all CPUs 50% busy"},
			[]string{"ok   zero loss", "short of CPU"}},
		{"lines lost, every CPU busy", big, 7, 0.96, 0,
			[]string{"capture loss 7; the CPUs were 96% busy: capture ran short of CPU here, before the disk bound"}, []string{"ok   zero loss"}},
		{"lines lost, busy not measured", big, 7, -1, 0,
			[]string{"capture loss 7\n"}, []string{"% busy", "short of CPU"}},
		{"within the queue", 200 << 10, 0, 0.2, 0,
			[]string{"n/a  zero loss at 500k msgs/s: not shown: the run paced at 500k msgs/s sent 0.2 MiB", "but the run fits in the capture queue"},
			[]string{"ok   zero loss", "ok   forwarding", "MISS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paced := func(loss int64) []PacedRun {
				return []PacedRun{{Target: "500k msgs/s", Achieved: 500, Unit: "k msgs/s", Goal: 500, Sent: tt.sent, CaptureLoss: loss, Busy: tt.busy,
					Backlog: tt.backlog, Lag: 450 * time.Millisecond}}
			}
			rep := &Report{Rows: []*Row{
				{Key: "b", Name: "(b) minimal forwarder", CaptureLoss: -1, Paced: paced(-1)},
				{Key: "d", Name: "(d) acpscope, capture on", Paced: paced(tt.lost)},
			}}
			var sb strings.Builder
			rep.Print(&sb)
			for _, w := range tt.want {
				if !strings.Contains(sb.String(), w) {
					t.Errorf("lacks %q:\n%s", w, sb.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(sb.String(), n) {
					t.Errorf("has %q:\n%s", n, sb.String())
				}
			}
		})
	}
}

// TestBusyDuring: a spinning goroutine makes the CPUs busy in part, and
// the error of what ran comes back.
func TestBusyDuring(t *testing.T) {
	errDone := errors.New("done")
	busy, err := busyDuring(func() error {
		for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
		}
		return errDone
	})
	if err != errDone {
		t.Fatalf("error %v, want %v", err, errDone)
	}
	if runtime.GOOS != "linux" {
		return // -1 or a share: /proc/stat may be missing
	}
	if busy <= 0 || busy > 1 {
		t.Fatalf("busy %.3f while a goroutine spun, want a share in (0, 1]", busy)
	}
}

// TestCPUTimes: the idle and total jiffies settle reads grow and the
// idle ones never outgrow the total.
func TestCPUTimes(t *testing.T) {
	idle1, total1, ok := cpuTimes()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("cpuTimes could not read /proc/stat on Linux")
		}
		return // settle falls back to a fixed pause
	}
	time.Sleep(20 * time.Millisecond)
	idle2, total2, ok := cpuTimes()
	if !ok || idle1 > total1 || idle2 < idle1 || total2 < total1 || idle2-idle1 > total2-total1 {
		t.Errorf("cpu times (%d, %d) then (%d, %d), ok %v", idle1, total1, idle2, total2, ok)
	}
}

// TestRTTPauseCoversCommitWindow: between round-trip turns the bench
// waits out (d)'s commit window, so a wider window's last commit cannot
// land in the forwarder's turn and flatter (d).
func TestRTTPauseCoversCommitWindow(t *testing.T) {
	tests := []struct {
		window, want time.Duration
	}{
		{0, rttSettle}, // not given: the proxy's default
		{capture.DefaultCommitEvery, rttSettle},
		{capture.MinCommitEvery, rttSettle},
		{200 * time.Millisecond, 210 * time.Millisecond},
		{capture.MaxCommitEvery, capture.MaxCommitEvery + 10*time.Millisecond},
	}
	for _, tt := range tests {
		got := Config{CommitEvery: tt.window}.rttPause()
		if got != tt.want {
			t.Errorf("window %v: pause %v, want %v", tt.window, got, tt.want)
		}
		if w := max(tt.window, capture.DefaultCommitEvery); got <= w {
			t.Errorf("window %v: pause %v does not outlast it", tt.window, got)
		}
	}
}

// TestPercentilesCountSlowTrips: round trips over slowRoundTrip are
// counted, one exactly at it is not, whatever the order they came in.
func TestPercentilesCountSlowTrips(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		in   []time.Duration
		slow int
	}{
		{nil, 0},
		{[]time.Duration{100 * time.Microsecond, 200 * time.Microsecond}, 0},
		{[]time.Duration{ms, ms - 1}, 0},
		{[]time.Duration{ms + 1, ms}, 1},
		{[]time.Duration{3 * ms, 100 * time.Microsecond, 2 * ms, ms + 1, 400 * time.Microsecond}, 3},
	}
	for _, tt := range tests {
		p := percentiles(append([]time.Duration(nil), tt.in...))
		if p.Slow != tt.slow || p.N != len(tt.in) {
			t.Errorf("%v: %d slow of %d, want %d of %d", tt.in, p.Slow, p.N, tt.slow, len(tt.in))
		}
	}
}
