package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// BenchConfig configures Bench. Agent and Proxy are required; sizes take
// defaults chosen so a run takes well under a minute on two cores.
type BenchConfig struct {
	// Agent is the test agent's command line; Bench appends a mode
	// ("echo", "burst N S").
	Agent []string
	// Proxy returns the command that runs acpscope's stdio proxy around
	// agent with capture on, writing capturePath, or with capture off
	// when capturePath is "".
	Proxy func(capturePath string, agent []string) *exec.Cmd
	// Dir holds the forwarder build, logs and captures (default: a new
	// temporary directory, removed at the end).
	Dir string
	// RTTCount request/response pairs of MsgSize bytes (default 20 000).
	RTTCount int
	// MsgCount lines of MsgSize bytes, agent to client (default 1 000 000).
	MsgCount int
	MsgSize  int // default 200
	// BigCount lines of BigSize bytes, agent to client (default 10 × 10 MB).
	BigCount int
	BigSize  int
	// RSSSize is the single line forwarded to measure peak RSS
	// (default 100 MiB; 0 keeps the default, negative skips it).
	RSSSize int
	// PacedMsgRate (lines/s, default 500 000) and PacedMBRate (MB/s,
	// default 250) are the rates at which setup (d) is run once more
	// with the agent pacing itself, to check that capture loses nothing
	// there. Negative skips.
	PacedMsgRate int
	PacedMBRate  int
	// Setups restricts the run to these setup keys: "a", "b", "c", "d",
	// and "e" (acpscope with capture off, which shows what capture costs;
	// it runs only when asked for).
	Setups []string
	// Progress receives one line per step; nil is quiet.
	Progress io.Writer
}

func (c BenchConfig) withDefaults() BenchConfig {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.RTTCount, 20000)
	def(&c.MsgCount, 1000000)
	def(&c.MsgSize, 200)
	def(&c.BigCount, 10)
	def(&c.BigSize, 10_000_000)
	def(&c.RSSSize, 100<<20)
	def(&c.PacedMsgRate, 500_000)
	def(&c.PacedMBRate, 250)
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// BenchRow is one setup's measurements. Zero values mean not measured.
type BenchRow struct {
	Key, Name string
	RTT       Percentiles
	MsgsPerS  float64 // MsgCount lines of MsgSize bytes
	MBPerS    float64 // BigCount lines of BigSize bytes (MB = 10^6 bytes)
	// Loss counts lines missing on the wire (sent minus received) over
	// the full-speed runs; it must be 0 everywhere.
	Loss int64
	// CaptureLoss counts messages the capture could not record in the
	// full-speed runs (setup d), -1 when unknown; CaptureNote says why.
	CaptureLoss int64
	CaptureNote string
	// PeakRSS is the middle process's high-water resident set in bytes
	// (VmHWM) over all runs, 0 when there is none (direct pipe).
	PeakRSS int64
	// RSSLine is PeakRSS during the RSSSize line alone.
	RSSLine int64
	// Paced are the runs at the target rates (setup d only).
	Paced []PacedRun
	Err   error
}

// BenchReport is the result of one Bench run.
type BenchReport struct {
	Config BenchConfig
	Rows   []*BenchRow
	Tee    string // the exact tee pipeline used for (c)
}

// ErrNoGo is returned when the minimal forwarder cannot be built.
var ErrNoGo = errors.New("the go command is needed to build the minimal forwarder for the comparison; install Go or put it on PATH")

// Bench measures, in one run, (a) the test agent driven directly, (b) a
// minimal forwarding process built here, (c) a tee pipeline logging each
// message with a timestamp, and (d) acpscope's stdio proxy with capture.
func Bench(ctx context.Context, cfg BenchConfig) (*BenchReport, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Agent) == 0 || cfg.Proxy == nil {
		return nil, errors.New("bench: Agent and Proxy are required")
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
	rep := &BenchReport{Config: cfg, Tee: teeScript}
	for _, s := range setups {
		fmt.Fprintf(cfg.Progress, "bench: %s\n", s.name)
		rep.Rows = append(rep.Rows, runSetup(ctx, cfg, s))
	}
	return rep, nil
}

func wanted(cfg BenchConfig, key string) bool {
	if len(cfg.Setups) == 0 {
		return key != "e"
	}
	for _, k := range cfg.Setups {
		if k == key {
			return true
		}
	}
	return false
}

// runSetup takes every measurement of one setup.
func runSetup(ctx context.Context, cfg BenchConfig, s *benchSetup) *BenchRow {
	row := &BenchRow{Key: s.key, Name: s.name, CaptureLoss: -1}
	fail := func(what string, err error) *BenchRow {
		row.Err = fmt.Errorf("%s: %w", what, err)
		return row
	}
	m, err := s.run(ctx, "rtt", "echo")
	if err != nil {
		return fail("round trips", err)
	}
	row.RTT, err = measureRTT(m, cfg.RTTCount, cfg.MsgSize)
	if err = m.finish(err); err != nil {
		return fail("round trips", err)
	}
	row.note(m)
	msgs, err := s.burst(ctx, "msgs", cfg.MsgCount, cfg.MsgSize, 0)
	if err != nil {
		return fail("msgs", err)
	}
	row.MsgsPerS = msgs.linesPerS()
	row.Loss += msgs.lost
	row.note(msgs.run)
	big, err := s.burst(ctx, "big", cfg.BigCount, cfg.BigSize, 0)
	if err != nil {
		return fail("big lines", err)
	}
	row.MBPerS = big.mbPerS()
	row.Loss += big.lost
	row.note(big.run)
	if cfg.RSSSize > 0 && s.middle {
		rss, err := s.burst(ctx, "rss", 1, cfg.RSSSize, 0)
		if err != nil {
			return fail("rss", err)
		}
		row.Loss += rss.lost
		row.RSSLine = rss.run.peakRSS
		row.note(rss.run)
	}
	if s.capture {
		if err := runPaced(ctx, cfg, s, row); err != nil {
			return fail("paced", err)
		}
	}
	return row
}

// runPaced has the agent send at the target rates, to see whether capture
// keeps up with no loss there.
func runPaced(ctx context.Context, cfg BenchConfig, s *benchSetup, row *BenchRow) error {
	if cfg.PacedMsgRate > 0 {
		r, err := s.burst(ctx, "paced-msgs", cfg.MsgCount, cfg.MsgSize, cfg.PacedMsgRate)
		if err != nil {
			return err
		}
		row.Paced = append(row.Paced, r.paced(fmt.Sprintf("%dk msgs/s of %d B", cfg.PacedMsgRate/1000, cfg.MsgSize), r.linesPerS()/1e3, "k msgs/s"))
	}
	if cfg.PacedMBRate > 0 {
		rate := max(1, cfg.PacedMBRate*1_000_000/cfg.BigSize)
		r, err := s.burst(ctx, "paced-big", cfg.BigCount, cfg.BigSize, rate)
		if err != nil {
			return err
		}
		row.Paced = append(row.Paced, r.paced(fmt.Sprintf("%d MB/s of %d B lines", cfg.PacedMBRate, cfg.BigSize), r.mbPerS(), " MB/s"))
	}
	return nil
}

// PacedRun is one run at a set rate.
type PacedRun struct {
	Target      string  // what was asked for
	Achieved    float64 // in Unit
	Unit        string
	WireLoss    int64
	CaptureLoss int64 // -1 when unknown
}

// burstResult is what arrived of one burst.
type burstResult struct {
	lines, bytes, lost int64
	size               int
	d                  time.Duration
	run                *benchRun
}

func (r burstResult) linesPerS() float64 { return float64(r.lines) / r.d.Seconds() }
func (r burstResult) mbPerS() float64    { return float64(r.bytes) / 1e6 / r.d.Seconds() }

func (r burstResult) paced(target string, achieved float64, unit string) PacedRun {
	return PacedRun{Target: target, Achieved: achieved, Unit: unit, WireLoss: r.lost, CaptureLoss: r.run.captureLoss}
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
	if err = m.finish(err); err != nil {
		return burstResult{}, err
	}
	if n != int64(count)*int64(size) && lines == int64(count) {
		return burstResult{}, fmt.Errorf("%d bytes arrived in %d lines, want %d bytes", n, lines, int64(count)*int64(size))
	}
	return burstResult{lines: lines, bytes: n, lost: int64(count) - lines, size: size, d: d, run: m}, nil
}

// note folds a finished run's RSS and capture loss into the row.
func (row *BenchRow) note(m *benchRun) {
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
func benchFile(cfg BenchConfig, name string) string { return filepath.Join(cfg.Dir, name) }
