package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// forwarderSource is setup (b): the least a forwarding process can do, an
// io.Copy each way. It is built with go build at the start of a run.
const forwarderSource = `package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		os.Exit(127)
	}
	go func() { io.Copy(in, os.Stdin); in.Close() }()
	io.Copy(os.Stdout, out)
	var ee *exec.ExitError
	if err := cmd.Wait(); errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
}
`

// teeScript is setup (c), run as bash -c teeScript bash AGENT…: each
// direction goes through tee into a logger that prefixes every message
// with a microsecond timestamp, the way people log stdio agents with
// tee and moreutils' ts (itself a perl script). The loggers read named
// pipes and bash waits for them, so their CPU time is in the setup's
// rusage (a >(…) process substitution is never waited for).
const teeScript = `stamp() { perl -MTime::HiRes=time -ne 'printf "%.6f %s", time, $_'; }; ` +
	`d=$(mktemp -d) && mkfifo "$d/in" "$d/out" || exit 1; ` +
	`stamp < "$d/in" > "$ACPSCOPE_BENCH_LOG.in" & stamp < "$d/out" > "$ACPSCOPE_BENCH_LOG.out" & ` +
	`tee "$d/in" | "$@" | tee "$d/out"; s=$?; wait; rm -r "$d"; exit $s`

// benchSetup is one way of putting something between the driver and the
// agent.
type benchSetup struct {
	key, name string
	middle    bool // there is a middle process whose RSS is measured
	// command returns the command to run around agent, and the file it
	// records into ("" when none).
	command func(tag string, agent []string) (*exec.Cmd, string)
	// readLoss reads a finished recording's loss, in messages and bytes,
	// and the most it had waiting on disk behind the wire; nil for a
	// setup that does not record. Setups that record run at the paced
	// rates too.
	readLoss func(path string) (loss, lostBytes, backlog int64, note string)
}

func benchSetups(ctx context.Context, cfg Config) ([]*benchSetup, error) {
	var all []*benchSetup
	if wanted(cfg, "a") {
		all = append(all, &benchSetup{key: "a", name: "(a) direct pipe", command: func(_ string, agent []string) (*exec.Cmd, string) {
			return exec.Command(agent[0], agent[1:]...), ""
		}})
	}
	if wanted(cfg, "b") {
		fwd, err := buildProgram(ctx, cfg.Dir, "forwarder", map[string]string{"main.go": forwarderSource})
		if err != nil {
			return nil, err
		}
		all = append(all, &benchSetup{key: "b", name: "(b) minimal forwarder", middle: true, command: func(_ string, agent []string) (*exec.Cmd, string) {
			return exec.Command(fwd, agent...), ""
		}})
	}
	if wanted(cfg, "c") {
		if _, err := exec.LookPath("bash"); err != nil {
			return nil, errors.New("setup (c) needs bash and perl")
		}
		all = append(all, &benchSetup{key: "c", name: "(c) tee + per-message timestamps", command: func(tag string, agent []string) (*exec.Cmd, string) {
			cmd := exec.Command("bash", append([]string{"-c", teeScript, "bash"}, agent...)...)
			cmd.Env = append(os.Environ(), "ACPSCOPE_BENCH_LOG="+benchFile(cfg, "tee-"+tag))
			return cmd, ""
		}})
	}
	if wanted(cfg, "d") {
		var n atomic.Int64
		name := "(d) acpscope, capture on" + cfg.commitNote("commits")
		all = append(all, &benchSetup{key: "d", name: name, middle: true, readLoss: readCaptureLoss, command: func(tag string, agent []string) (*exec.Cmd, string) {
			path := benchFile(cfg, fmt.Sprintf("capture-%s-%d.acpscope", tag, n.Add(1)))
			return cfg.Proxy(path, agent), path
		}})
	}
	if wanted(cfg, "e") {
		all = append(all, &benchSetup{key: "e", name: "(e) acpscope, --no-capture", middle: true, command: func(_ string, agent []string) (*exec.Cmd, string) {
			return cfg.Proxy("", agent), ""
		}})
	}
	if wanted(cfg, "f") {
		floor, err := buildFloor(ctx, cfg.Dir)
		if err != nil {
			return nil, err
		}
		var n atomic.Int64
		name := "(f) forwarder + synced file" + cfg.commitNote("syncs")
		all = append(all, &benchSetup{key: "f", name: name, middle: true, readLoss: readFloorLoss, command: func(tag string, agent []string) (*exec.Cmd, string) {
			path := benchFile(cfg, fmt.Sprintf("floor-%s-%d", tag, n.Add(1)))
			return floorCommand(floor, path, cfg.CommitEvery, agent), path
		}})
	}
	for i, peer := range cfg.Peers {
		key := fmt.Sprintf("p%d", i+1)
		all = append(all, &benchSetup{key: key, name: fmt.Sprintf("(%s) %s", key, peer), middle: true, command: func(_ string, agent []string) (*exec.Cmd, string) {
			return peerCommand(peer, agent), ""
		}})
	}
	for _, s := range all {
		agent := cfg.Agent
		cmd := s.command
		s.command = func(tag string, mode []string) (*exec.Cmd, string) {
			return cmd(tag, append(append([]string(nil), agent...), mode...))
		}
	}
	return all, nil
}

// commitNote names, for a setup that records, a commit window other
// than capture's default: ", <verb> every 200ms".
func (cfg Config) commitNote(verb string) string {
	if cfg.CommitEvery == 0 || cfg.CommitEvery == capture.DefaultCommitEvery {
		return ""
	}
	return ", " + verb + " every " + cfg.CommitEvery.String()
}

// peerCommand runs another proxy, given as one shell command line to
// which the agent's command line is appended as arguments, so any tool
// can be put beside ours: sh -c 'exec CMD "$@"' sh AGENT….
func peerCommand(cmdline string, agent []string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", "exec " + cmdline + ` "$@"`, "sh"}, agent...)...)
}

// buildProgram writes files (name → source) into a module of its own,
// named name, and builds it.
func buildProgram(ctx context.Context, dir, name string, files map[string]string) (string, error) {
	src := benchFile(Config{Dir: dir}, name+"-src")
	if err := os.MkdirAll(src, 0o700); err != nil {
		return "", err
	}
	for file, source := range files {
		if err := os.WriteFile(filepath.Join(src, file), []byte(source), 0o600); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(src+"/go.mod", []byte("module "+name+"\n\ngo 1.23\n"), 0o600); err != nil {
		return "", err
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", ErrNoGo
	}
	bin := benchFile(Config{Dir: dir}, name)
	build := exec.CommandContext(ctx, goCmd, "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the bench's %s: %w\n%s", name, err, out)
	}
	return bin, nil
}

// benchRun is one process tree being measured.
type benchRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr bytes.Buffer
	// record is the file the setup records into, read with readLoss
	// once the run is finished.
	record   string
	readLoss func(path string) (loss, lostBytes, backlog int64, note string)

	rssStop chan struct{}
	rssDone chan struct{}
	rss     atomic.Int64

	peakRSS     int64
	captureLoss int64
	captureNote string
	// lostBytes is what the capture could not record, in bytes.
	lostBytes int64
	// backlog is the most that waited in the writer's spool at once.
	backlog int64
	// cpu is the process tree's user+sys time (the setup's process and
	// every child it waited for, the agent included), from its rusage.
	cpu time.Duration
	// started and exited bracket the whole run, start-up to exit.
	started, exited time.Time
}

// run starts the setup with the agent in mode.
func (s *benchSetup) run(ctx context.Context, tag string, mode ...string) (*benchRun, error) {
	cmd, recordPath := s.command(s.key+"-"+tag, mode)
	m := &benchRun{cmd: cmd, record: recordPath, readLoss: s.readLoss, captureLoss: -1, rssStop: make(chan struct{}), rssDone: make(chan struct{})}
	cmd.Stderr = &m.stderr
	var err error
	if m.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if m.stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	m.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
	go func() { // RSS poller: ends when finish closes rssStop
		defer close(m.rssDone)
		defer stop()
		if !s.middle {
			<-m.rssStop
			return
		}
		pollRSS(cmd.Process.Pid, &m.rss, m.rssStop)
	}()
	return m, nil
}

// finish closes stdin, drains stdout, waits for the process and reads
// the capture's loss. It returns err, or the first error it meets.
func (m *benchRun) finish(err error) error {
	m.stdin.Close()
	io.Copy(io.Discard, m.stdout)
	werr := m.cmd.Wait()
	m.exited = time.Now()
	if ps := m.cmd.ProcessState; ps != nil {
		m.cpu = ps.UserTime() + ps.SystemTime()
	}
	close(m.rssStop)
	<-m.rssDone
	m.peakRSS = m.rss.Load()
	if err == nil {
		err = werr
	}
	if err != nil && m.stderr.Len() > 0 {
		err = fmt.Errorf("%w; stderr: %s", err, strings.TrimSpace(m.stderr.String()))
	}
	if m.record != "" {
		if err == nil && strings.Contains(m.stderr.String(), "NOT RECORDING") {
			err = fmt.Errorf("the proxy did not record: %s", strings.TrimSpace(m.stderr.String()))
		}
		m.captureLoss, m.lostBytes, m.backlog, m.captureNote = m.readLoss(m.record)
	}
	return err
}

// readCaptureLoss opens a finished capture and returns its loss count
// in messages and bytes, and the most its writer was behind.
func readCaptureLoss(path string) (loss, lostBytes, backlog int64, note string) {
	defer func() {
		if p := recover(); p != nil { // the store may still be a stub
			loss, note = -1, fmt.Sprint("capture unreadable: ", p)
		}
	}()
	r, err := capture.Open(path)
	if err != nil {
		return -1, 0, 0, "capture unreadable: " + err.Error()
	}
	defer r.Close()
	l := r.Meta().Loss
	if l.WriteErrors > 0 {
		note = l.LastError
	}
	return l.Messages, l.Bytes, r.Meta().Backlog.Peak, note
}

// pollRSS samples the process's VmHWM (its peak resident set so far)
// every 5 ms until stop is closed; the kernel keeps the peak, so sampling
// only has to catch the last value before the process exits.
func pollRSS(pid int, peak *atomic.Int64, stop <-chan struct{}) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if v := readVmHWM(path); v > peak.Load() {
			peak.Store(v)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func readVmHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte("VmHWM:"))
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+len("VmHWM:"):]))
	if len(f) < 2 {
		return 0
	}
	kb, _ := strconv.ParseInt(f[0], 10, 64)
	return kb << 10
}
