package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// Config configures Run. Agent and Proxy are required; sizes take
// defaults chosen so a run takes well under a minute on two cores.
type Config struct {
	// Agent is the test agent's command line; Run appends a mode
	// ("echo", "burst N S").
	Agent []string
	// Proxy returns the command that runs acpscope's stdio proxy around
	// agent with capture on, writing capturePath, or with capture off
	// when capturePath is "".
	Proxy func(capturePath string, agent []string) *exec.Cmd
	// CommitEvery is the capture's commit window that Proxy gives (d),
	// named in its row when it is not capture.DefaultCommitEvery.
	CommitEvery time.Duration
	// Dir holds the forwarder build, logs and captures (default: a new
	// temporary directory, removed at the end).
	Dir string
	// RTTCount request/response pairs of MsgSize bytes per round-trip
	// run (default 5 000), and RTTRuns such runs, each with fresh
	// pipelines (default 10): the targets are judged run by run.
	RTTCount int
	RTTRuns  int
	// MsgCount lines of MsgSize bytes, agent to client (default 1 000 000).
	MsgCount int
	MsgSize  int // default 200
	// BigCount lines of BigSize bytes, agent to client (default 10 × 10 MB).
	BigCount int
	BigSize  int
	// RSSSize is the single line forwarded to measure peak RSS
	// (default 100 MiB; 0 keeps the default, negative skips it).
	RSSSize int
	// EchoSizes are single lines echoed through each setup, timed from
	// the first byte written to the last byte of the echo read (default
	// 20 MB and 100 MB; negative first entry skips).
	EchoSizes []int
	// PacedMsgRate (lines/s, default 1 000 000) and PacedMBRate (MB/s,
	// default 0.8 × the capture directory's synced write rate, measured
	// in the run) are the rates at which setup (b) and the setups that
	// record, (d) and (f), run once more with the agent pacing itself, to
	// check that recording loses nothing there and forwarding keeps the
	// pace. Negative skips.
	PacedMsgRate int
	PacedMBRate  int
	// SyncProbeBytes are written and fsynced to Dir to measure its
	// synced write rate (default 256 MiB; negative skips).
	SyncProbeBytes int
	// Peers are other proxies to measure beside ours, each one shell
	// command line to which the agent's command line is appended.
	Peers []string
	// PacedBigCount is how many BigSize lines the paced MB/s run sends
	// (default 50): enough that the capture queue (64 MiB) cannot hide a
	// writer slower than the pace, as the ten of the flat-out run can.
	PacedBigCount int
	// Reps is how many times each throughput run is repeated, setups
	// alternating; the median counts (default 3).
	Reps int
	// Setups restricts the run to these setup keys: "a", "b", "c", "d",
	// "e" (acpscope with capture off, which shows what capture costs) and
	// "f" (the minimal forwarder also writing a synced file, which shows
	// what recording the bytes costs). "e" and "f" run only when asked
	// for.
	Setups []string
	// Progress receives one line per step; nil is quiet.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.RTTCount, 5000)
	def(&c.RTTRuns, 10)
	def(&c.SyncProbeBytes, 256<<20)
	if len(c.EchoSizes) == 0 {
		c.EchoSizes = []int{20_000_000, 100_000_000}
	}
	def(&c.MsgCount, 1000000)
	def(&c.MsgSize, 200)
	def(&c.BigCount, 10)
	def(&c.BigSize, 10_000_000)
	def(&c.RSSSize, 100<<20)
	def(&c.PacedMsgRate, 1_000_000)
	def(&c.PacedBigCount, 50)
	def(&c.Reps, 3)
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// Row is one setup's measurements. Zero values mean not measured.
type Row struct {
	Key, Name string
	RTT       Percentiles   // over all round-trip runs together
	RTTRuns   []Percentiles // run by run
	// CPUPerM is user+sys seconds of the whole setup (agent included)
	// per million lines in the msgs run, median of the repetitions.
	CPUPerM float64
	// Echo is the median time per EchoSizes entry of one line echoed.
	Echo []time.Duration
	// CaptureMBPerS is what capture recorded in the flat-out big-line
	// runs: bytes kept over the whole run, start-up to exit (median).
	CaptureMBPerS float64
	MsgsPerS      float64 // MsgCount lines of MsgSize bytes
	MBPerS        float64 // BigCount lines of BigSize bytes (MB = 10^6 bytes)
	// Loss counts lines missing on the wire (sent minus received) over
	// the full-speed runs; it must be 0 everywhere.
	Loss int64
	// CaptureLoss counts messages the setup could not record in the
	// full-speed runs (setups d and f), -1 when unknown; CaptureNote says
	// why.
	CaptureLoss int64
	CaptureNote string
	// PeakRSS is the middle process's high-water resident set in bytes
	// (VmHWM) over all runs, 0 when there is none (direct pipe).
	PeakRSS int64
	// RSSLine is PeakRSS during the RSSSize line alone.
	RSSLine int64
	// Paced are the runs at the target rates (setups b, d and f).
	Paced []PacedRun
	Err   error
}

// Report is the result of one Run.
type Report struct {
	Config Config
	Rows   []*Row
	Tee    string // the exact tee pipeline used for (c)
	// DiskMBPerS is the capture directory's synced write rate (MB/s)
	// and DiskErr why it could not be measured.
	DiskMBPerS float64
	DiskErr    error
	// FaultCost is what faulting in one fresh 4 KiB page took, and
	// FaultErr why it could not be measured.
	FaultCost time.Duration
	FaultErr  error
}

// ErrNoGo is returned when the minimal forwarder cannot be built.
var ErrNoGo = errors.New("the go command is needed to build the minimal forwarder for the comparison; install Go or put it on PATH")

// Run measures, in one run, (a) the test agent driven directly, (b) a
// minimal forwarding process built here, (c) a tee pipeline logging each
// message with a timestamp, and (d) acpscope's stdio proxy with capture.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Agent) == 0 || cfg.Proxy == nil {
		return nil, errors.New("agent and proxy commands are required")
	}
	if err := CheckSetups(cfg.Setups); err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "acpscope-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	}
	setups, err := benchSetups(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Config: cfg, Tee: teeScript}
	for _, s := range setups {
		rep.Rows = append(rep.Rows, &Row{Key: s.key, Name: s.name, CaptureLoss: -1})
	}
	if cfg.SyncProbeBytes > 0 {
		fmt.Fprintln(cfg.Progress, "acpscope bench: synced write rate of", cfg.Dir)
		rep.DiskMBPerS, rep.DiskErr = medianSyncWriteRate(cfg.Dir, cfg.SyncProbeBytes)
	}
	fmt.Fprintln(cfg.Progress, "acpscope bench: page-fault cost")
	rep.FaultCost, rep.FaultErr = medianFaultCost()
	if cfg.PacedMBRate == 0 {
		cfg.PacedMBRate = int(0.8 * rep.DiskMBPerS)
		if cfg.PacedMBRate <= 0 {
			cfg.PacedMBRate = 250
		}
		rep.Config.PacedMBRate = cfg.PacedMBRate
	}
	runPhases(ctx, cfg, setups, rep.Rows)
	return rep, nil
}

// Setups are the setup keys Run knows, in table order.
// Other proxies (Config.Peers) are p1, p2, … in the order given.
var Setups = []string{"a", "b", "c", "d", "e", "f"}

// CheckSetups reports, naming the valid keys, a key Run does not
// know: an unknown setup would otherwise be skipped without a word.
func CheckSetups(keys []string) error {
	for _, k := range keys {
		if !slices.Contains(Setups, k) {
			return fmt.Errorf("unknown setup %q; the setups are a (direct pipe), b (minimal forwarder), c (tee pipeline), d (acpscope with capture), e (acpscope --no-capture) and f (minimal forwarder writing a synced file)", k)
		}
	}
	return nil
}

func wanted(cfg Config, key string) bool {
	if len(cfg.Setups) == 0 {
		return key != "e" && key != "f"
	}
	for _, k := range cfg.Setups {
		if k == key {
			return true
		}
	}
	return false
}

// runPhases takes the measurements phase by phase, interleaving the
// setups within each phase (round trips in alternating blocks, throughput
// runs in alternating repetitions) so that a machine whose load changes
// during the run (two cores shared with other work) skews every setup
// alike and the ratios stay meaningful.
func runPhases(ctx context.Context, cfg Config, setups []*benchSetup, rows []*Row) {
	all := make([][]time.Duration, len(rows))
	for run := range cfg.RTTRuns {
		fmt.Fprintf(cfg.Progress, "acpscope bench: round trips, run %d of %d\n", run+1, cfg.RTTRuns)
		interleaveRTT(ctx, cfg, setups, rows, all)
	}
	for i, t := range all {
		rows[i].RTT = percentiles(t)
	}
	fmt.Fprintf(cfg.Progress, "acpscope bench: %d B lines\n", cfg.MsgSize)
	repeatBursts(ctx, cfg, setups, rows, "msgs", cfg.MsgCount, cfg.MsgSize, func(row *Row, r []burstResult) {
		row.MsgsPerS = median(r, burstResult.linesPerS)
		row.CPUPerM = median(r, burstResult.cpuPerM)
	})
	fmt.Fprintln(cfg.Progress, "acpscope bench: big lines")
	repeatBursts(ctx, cfg, setups, rows, "big", cfg.BigCount, cfg.BigSize, func(row *Row, r []burstResult) {
		row.MBPerS = median(r, burstResult.mbPerS)
		if row.CaptureLoss >= 0 {
			row.CaptureMBPerS = median(r, burstResult.keptMBPerS)
		}
	})
	if len(cfg.EchoSizes) > 0 && cfg.EchoSizes[0] > 0 {
		fmt.Fprintln(cfg.Progress, "acpscope bench: huge lines echoed")
		echoPhase(ctx, cfg, setups, rows)
	}
	for i, s := range setups {
		row := rows[i]
		if row.Err != nil {
			continue
		}
		if cfg.RSSSize > 0 && s.middle {
			fmt.Fprintf(cfg.Progress, "acpscope bench: %s: one %d B line\n", s.name, cfg.RSSSize)
			rss, err := s.burst(ctx, "rss", 1, cfg.RSSSize, 0)
			if err != nil {
				row.Err = fmt.Errorf("rss: %w", err)
				continue
			}
			row.Loss += rss.lost
			row.RSSLine = rss.run.peakRSS
			row.note(rss.run)
		}
		if (s.readLoss != nil || s.key == "b") && (cfg.PacedMsgRate > 0 || cfg.PacedMBRate > 0) {
			fmt.Fprintf(cfg.Progress, "acpscope bench: %s: paced runs\n", s.name)
			if err := runPaced(ctx, cfg, s, row); err != nil {
				row.Err = fmt.Errorf("paced: %w", err)
			}
		}
	}
}

// Round trips are timed in turns of rttBlock per setup. Before each turn
// the machine settles for rttSettle (longer than capture's default
// commit window, so one setup's background commit does not land in
// another's turn; see rttPause) and rttRewarm untimed trips wake the
// pipeline up again.
const (
	rttBlock  = 1000
	rttSettle = 60 * time.Millisecond
	rttRewarm = 20
)

// rttPause is rttSettle stretched by however much (d)'s commit window
// exceeds the default: a wider window's last commit would otherwise fall
// in the next setup's turn, slowing the forwarder it is compared with.
func (c Config) rttPause() time.Duration {
	return rttSettle + max(0, c.CommitEvery-capture.DefaultCommitEvery)
}

// interleaveRTT starts every setup's echo pipeline, then times round
// trips in turns of rttBlock per setup.
// Each run's percentiles go to the row's RTTRuns and its times to all.
func interleaveRTT(ctx context.Context, cfg Config, setups []*benchSetup, rows []*Row, all [][]time.Duration) {
	type live struct {
		m     *benchRun
		rtt   *rttState
		times []time.Duration
	}
	runs := make([]*live, len(setups))
	for i, s := range setups {
		if rows[i].Err != nil {
			continue
		}
		m, err := s.run(ctx, "rtt", "echo")
		if err != nil {
			rows[i].Err = fmt.Errorf("round trips: %w", err)
			continue
		}
		l := &live{m: m, rtt: newRTTState(cfg.MsgSize)}
		if err := l.rtt.trips(m, rttWarmup, nil); err != nil {
			rows[i].Err = fmt.Errorf("round trips: %w", m.finish(err))
			continue
		}
		runs[i] = l
	}
	for done := 0; done < cfg.RTTCount; done += rttBlock {
		n := min(rttBlock, cfg.RTTCount-done)
		for i, l := range runs {
			if l == nil || rows[i].Err != nil {
				continue
			}
			time.Sleep(cfg.rttPause())
			err := l.rtt.trips(l.m, rttRewarm, nil)
			if err == nil {
				err = l.rtt.trips(l.m, n, &l.times)
			}
			if err != nil {
				rows[i].Err = fmt.Errorf("round trips: %w", err)
			}
		}
	}
	for i, l := range runs {
		if l == nil {
			continue
		}
		if err := l.m.finish(nil); err != nil && rows[i].Err == nil {
			rows[i].Err = fmt.Errorf("round trips: %w", err)
		}
		all[i] = append(all[i], l.times...)
		rows[i].RTTRuns = append(rows[i].RTTRuns, percentiles(l.times))
		rows[i].note(l.m)
	}
}

// repeatBursts runs each setup's burst cfg.Reps times, alternating
// setups, and hands each row its results.
func repeatBursts(ctx context.Context, cfg Config, setups []*benchSetup, rows []*Row, tag string, count, size int, set func(*Row, []burstResult)) {
	results := make([][]burstResult, len(setups))
	for rep := 0; rep < cfg.Reps; rep++ {
		for i, s := range setups {
			if rows[i].Err != nil {
				continue
			}
			r, err := s.burst(ctx, fmt.Sprintf("%s-%d", tag, rep), count, size, 0)
			if err != nil {
				rows[i].Err = fmt.Errorf("%s: %w", tag, err)
				continue
			}
			rows[i].Loss += r.lost
			rows[i].note(r.run)
			results[i] = append(results[i], r)
		}
	}
	for i, r := range results {
		if rows[i].Err == nil && len(r) > 0 {
			set(rows[i], r)
		}
	}
}

// median returns the median of f over the results.
func median(rs []burstResult, f func(burstResult) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// runPaced has the agent send at the target rates, to see whether capture
// keeps up with no loss there; the minimal forwarder runs them too, so
// forwarding at those rates compares like with like.
func runPaced(ctx context.Context, cfg Config, s *benchSetup, row *Row) error {
	if cfg.PacedMsgRate > 0 {
		r, busy, err := s.pacedBurst(ctx, "paced-msgs", cfg.MsgCount, cfg.MsgSize, cfg.PacedMsgRate)
		if err != nil {
			return err
		}
		row.Paced = append(row.Paced, r.paced(fmt.Sprintf("%dk msgs/s of %d B", cfg.PacedMsgRate/1000, cfg.MsgSize), r.linesPerS()/1e3, "k msgs/s", float64(cfg.PacedMsgRate)/1e3, busy))
	}
	if cfg.PacedMBRate > 0 {
		rate := max(1, cfg.PacedMBRate*1_000_000/cfg.BigSize)
		r, busy, err := s.pacedBurst(ctx, "paced-big", cfg.PacedBigCount, cfg.BigSize, rate)
		if err != nil {
			return err
		}
		row.Paced = append(row.Paced, r.paced(fmt.Sprintf("%d MB/s of %d × %d B lines", cfg.PacedMBRate, cfg.PacedBigCount, cfg.BigSize), r.mbPerS(), " MB/s", float64(rate*cfg.BigSize)/1e6, busy))
	}
	return nil
}

// pacedBurst is a burst at a set pace, with how busy the CPUs were over
// it: where capture loses lines, that tells a machine short of CPU from
// one short of disk.
func (s *benchSetup) pacedBurst(ctx context.Context, tag string, count, size, pace int) (r burstResult, busy float64, err error) {
	busy, err = busyDuring(func() (err error) {
		r, err = s.burst(ctx, tag, count, size, pace)
		return err
	})
	return r, busy, err
}

// PacedRun is one run at a set rate.
type PacedRun struct {
	Target      string  // what was asked for
	Achieved    float64 // in Unit
	Unit        string
	Goal        float64 // the rate the target asks for, in Unit
	Sent        int64   // bytes the agent sent
	WireLoss    int64
	CaptureLoss int64 // -1 when unknown
	// CPUPerM is the setup's user+sys seconds per million lines sent,
	// of Size bytes.
	CPUPerM float64
	Size    int
	// Busy is the share of all CPUs' time busy during the run, whoever
	// used it (-1: not measured).
	Busy float64
	// Backlog is the most the capture held on disk at once, behind the
	// wire; Lag how long after the last line the setup exited, recording
	// that backlog.
	Backlog int64
	Lag     time.Duration
}

// burstResult is what arrived of one burst.
type burstResult struct {
	lines, bytes, lost int64
	sent               int64 // bytes the agent sent
	size               int
	d                  time.Duration
	run                *benchRun
	wireEnd            time.Time // when the last byte arrived
}

func (r burstResult) linesPerS() float64 { return float64(r.lines) / r.d.Seconds() }
func (r burstResult) mbPerS() float64    { return float64(r.bytes) / 1e6 / r.d.Seconds() }

// cpuPerM is the setup's user+sys seconds per million lines sent.
func (r burstResult) cpuPerM() float64 {
	return r.run.cpu.Seconds() / (float64(r.sent/int64(r.size)) / 1e6)
}

// keptMBPerS is what the capture recorded over the whole run, start-up
// to exit (the writer's final commit included).
func (r burstResult) keptMBPerS() float64 {
	return float64(r.sent-r.run.lostBytes) / 1e6 / r.run.exited.Sub(r.run.started).Seconds()
}

func (r burstResult) paced(target string, achieved float64, unit string, goal, busy float64) PacedRun {
	return PacedRun{Target: target, Achieved: achieved, Unit: unit, Goal: goal, Sent: r.sent, WireLoss: r.lost, CaptureLoss: r.run.captureLoss, CPUPerM: r.cpuPerM(), Size: r.size, Busy: busy,
		Backlog: r.run.backlog, Lag: r.run.exited.Sub(r.wireEnd)}
}

// burst runs the agent in burst mode through the setup, at pace lines
// per second (0: as fast as it can), and counts what arrives.
func (s *benchSetup) burst(ctx context.Context, tag string, count, size, pace int) (burstResult, error) {
	m, err := s.run(ctx, tag, "burst", fmt.Sprint(count), fmt.Sprint(size), fmt.Sprint(pace))
	if err != nil {
		return burstResult{}, err
	}
	m.stdin.Close()
	lines, n, d, err := countLines(m.stdout)
	wireEnd := time.Now()
	if err = m.finish(err); err != nil {
		return burstResult{}, err
	}
	if n != int64(count)*int64(size) && lines == int64(count) {
		return burstResult{}, fmt.Errorf("%d bytes arrived in %d lines, want %d bytes", n, lines, int64(count)*int64(size))
	}
	sent := int64(count) * int64(size)
	return burstResult{lines: lines, bytes: n, lost: int64(count) - lines, sent: sent, size: size, d: d, run: m, wireEnd: wireEnd}, nil
}

// note folds a finished run's RSS and capture loss into the row.
func (row *Row) note(m *benchRun) {
	row.PeakRSS = max(row.PeakRSS, m.peakRSS)
	if m.captureLoss >= 0 {
		row.CaptureLoss = max(row.CaptureLoss, 0) + m.captureLoss
	}
	if m.captureNote != "" {
		row.CaptureNote = m.captureNote
	}
}

// countLines reads r to its end, counting newlines and bytes, and the time
// from the first byte to the end.
func countLines(r io.Reader) (lines, n int64, d time.Duration, err error) {
	buf := make([]byte, 1<<20)
	var start time.Time
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			if n == 0 {
				start = time.Now()
			}
			n += int64(k)
			lines += int64(countNewlines(buf[:k]))
		}
		if rerr == io.EOF {
			return lines, n, time.Since(start), nil
		}
		if rerr != nil {
			return lines, n, time.Since(start), rerr
		}
	}
}

// benchFile names a file in the bench directory.
func benchFile(cfg Config, name string) string { return filepath.Join(cfg.Dir, name) }
