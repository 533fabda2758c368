package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/bench"
	"github.com/acpscope/acpscope/internal/testagent/peer"
	flag "github.com/spf13/pflag"
)

// benchHelp is `acpscope bench`'s synopsis, examples and flags.
func benchHelp() help {
	return help{
		usage: "[flags]",
		example: `  acpscope bench
  acpscope bench --msgs 200000 --big-count 3 --setups b,d
  acpscope bench --setups a,b,c,d,e     # e: the proxy with --no-capture, to see what capture costs
  acpscope bench --setups b,d,f         # f: the forwarder also writing a synced file, what recording bytes costs
  acpscope bench --setups b,d --peer 'npx @example/acp-proxy --'   # another proxy beside ours
  acpscope bench --setups b,d --commit-every 200ms   # round-trip tails with a wider commit window`,
		setup: benchFlags,
	}
}

// benchPeerHelp is `acpscope bench-peer`'s synopsis.
func benchPeerHelp() help {
	return help{
		usage: "MODE [ARGS]",
	}
}

// runBenchPeer is the test agent the benchmark drives (modes echo and
// burst, and the rest of internal/testagent's), so the bench needs no
// source tree.
func runBenchPeer(_ *flag.FlagSet, args []string) (int, error) {
	return peer.Main(args, os.Stdin, os.Stdout, os.Stderr), nil
}

func benchFlags(fs *flag.FlagSet) {
	fs.Int("rtt", 5000, "request/response round trips to time in each round-trip run")
	fs.Int("rtt-runs", 10, "round-trip runs, each with fresh pipelines; the targets are judged run by run")
	fs.Int("msgs", 1000000, "lines for the msgs/s run (agent to client)")
	fs.Int("msg-size", 200, "bytes per line and per round-trip message, newline included")
	fs.Int("big-count", 10, "lines for the MB/s run")
	fs.Int("big-size", 10_000_000, "bytes per line in the MB/s run")
	fs.Int("rss-size", 100<<20, "one line of this many bytes to measure peak RSS (0: skip)")
	fs.IntSlice("echo", []int{20_000_000, 100_000_000}, "sizes in bytes of single lines echoed through each setup and timed (0: skip)")
	fs.Int("sync-probe", 256<<20, "bytes written and fsynced to measure the capture directory's synced write rate (0: skip)")
	fs.StringArray("peer", nil, "another proxy to measure beside ours: one shell command line to which the agent's command line is appended (repeatable)")
	fs.Int("reps", 3, "repeat each throughput run this many times, setups alternating; the median counts")
	fs.Int("paced-msgs", 1_000_000, "also run (b), (d) and (f) with the agent paced to this many lines/s, to check capture loses nothing and forwarding keeps the pace (negative: skip)")
	fs.Int("paced-mb", 0, "also run (b), (d) and (f) with big lines paced to this many MB/s (0: 0.8 × the synced write rate measured; negative: skip)")
	fs.Int("paced-big-count", 50, "lines for the paced MB/s run: more than the capture queue can hide")
	fs.String("setups", "a,b,c,d", "setups to run: a direct, b minimal forwarder, c tee pipeline, d acpscope with capture, e acpscope --no-capture, f minimal forwarder writing a synced file")
	fs.String("keep", "", "keep the forwarder, logs and captures in this directory")
	rangedDurationFlag(fs, "commit-every", capture.DefaultCommitEvery, capture.MinCommitEvery, capture.MaxCommitEvery,
		"run (d) with this --commit-every, to weigh the capture's durability window against round-trip tails")
}

func runBench(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) > 0 {
		return 2, usageErrorf("bench takes no arguments (got %q)", args)
	}
	cfg, err := benchConfig(fs)
	if err != nil {
		return 2, err
	}
	exe, err := os.Executable()
	if err != nil {
		return 1, fmt.Errorf("finding our own binary to benchmark: %w", err)
	}
	every, _ := fs.GetDuration("commit-every")
	cfg.Agent, cfg.Proxy, cfg.Progress = []string{exe, "bench-peer"}, benchProxy(exe, every), os.Stderr
	cfg.CommitEvery = every
	if cfg.Dir, _ = fs.GetString("keep"); cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return 1, err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return 1, err
	}
	rep.Print(os.Stdout)
	return 0, nil
}

// benchConfig reads the flags, refusing what bench.Run would otherwise
// take silently: a count of zero (which Run reads as "the default"), a
// negative one, and setups it does not know.
func benchConfig(fs *flag.FlagSet) (bench.Config, error) {
	var cfg bench.Config
	positive := []struct {
		name string
		dst  *int
	}{
		{"rtt", &cfg.RTTCount}, {"rtt-runs", &cfg.RTTRuns}, {"msgs", &cfg.MsgCount}, {"msg-size", &cfg.MsgSize},
		{"big-count", &cfg.BigCount}, {"big-size", &cfg.BigSize}, {"reps", &cfg.Reps}, {"paced-big-count", &cfg.PacedBigCount},
	}
	for _, p := range positive {
		if *p.dst, _ = fs.GetInt(p.name); *p.dst <= 0 {
			return cfg, usageErrorf("--%s must be a positive number, got %d", p.name, *p.dst)
		}
	}
	if cfg.RSSSize, _ = fs.GetInt("rss-size"); cfg.RSSSize < 0 {
		return cfg, usageErrorf("--rss-size must be a size in bytes, or 0 to skip, got %d", cfg.RSSSize)
	} else if cfg.RSSSize == 0 {
		cfg.RSSSize = -1 // Run's "skip"
	}
	if cfg.PacedMsgRate, _ = fs.GetInt("paced-msgs"); cfg.PacedMsgRate == 0 {
		return cfg, usageErrorf("--paced-msgs must be a rate above 0, or negative to skip, got 0")
	}
	cfg.PacedMBRate, _ = fs.GetInt("paced-mb") // 0: from the synced write rate
	if cfg.SyncProbeBytes, _ = fs.GetInt("sync-probe"); cfg.SyncProbeBytes < 0 {
		return cfg, usageErrorf("--sync-probe must be a size in bytes, or 0 to skip, got %d", cfg.SyncProbeBytes)
	} else if cfg.SyncProbeBytes == 0 {
		cfg.SyncProbeBytes = -1 // Run's "skip"
	}
	cfg.EchoSizes, _ = fs.GetIntSlice("echo")
	for _, n := range cfg.EchoSizes {
		if n < 0 {
			return cfg, usageErrorf("--echo takes sizes in bytes, or 0 to skip, got %d", n)
		}
	}
	if len(cfg.EchoSizes) == 0 || cfg.EchoSizes[0] == 0 {
		cfg.EchoSizes = []int{-1} // Run's "skip"
	}
	cfg.Peers, _ = fs.GetStringArray("peer")
	for _, p := range cfg.Peers {
		if strings.TrimSpace(p) == "" {
			return cfg, usageErrorf("--peer needs a command line, such as --peer 'other-proxy --'")
		}
	}
	setups, _ := fs.GetString("setups")
	cfg.Setups = strings.Split(setups, ",")
	if err := bench.CheckSetups(cfg.Setups); err != nil {
		return cfg, usageErrorf("--setups: %v", err)
	}
	return cfg, nil
}

// benchProxy runs this very binary as the stdio proxy, as an editor would.
// The setups that record commit every commitEvery.
func benchProxy(exe string, commitEvery time.Duration) func(capturePath string, agent []string) *exec.Cmd {
	return func(capturePath string, agent []string) *exec.Cmd {
		args := []string{"--quiet", "--capture", capturePath, "--commit-every", commitEvery.String()}
		if capturePath == "" {
			args = []string{"--quiet", "--no-capture"}
		}
		return exec.Command(exe, append(append(args, "--"), agent...)...)
	}
}
