package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/replay"
	"github.com/acpscope/acpscope/wire"
	flag "github.com/spf13/pflag"
)

// replayHelp is `acpscope replay`'s synopsis, examples and flags.
func replayHelp() help {
	return help{
		usage: "CAPTURE [--session S] [flags] -- AGENT CMD…  |  --as-agent CAPTURE [--session S] [--speed 1|10|max]",
		example: `  acpscope replay bug.acpscope -- ./my-agent --acp          # exit 0 matches, 1 differs, 2 error
  acpscope replay latest --ignore 'result.usage.**' --timeout 2m -- npx my-agent
  acpscope replay --as-agent bug.acpscope --speed max        # put this in an editor's agent config
  acpscope replay slow.acpscope --faults recorded -- ./my-agent   # the same faults, against a new agent`,
		setup: func(fs *flag.FlagSet) {
			fs.String("dir", "", "capture directory (default $ACPSCOPE_DIR or ~/.local/state/acpscope/captures)")
			fs.String("session", "", "replay only this session (and the connection set-up before it)")
			fs.Bool("as-agent", false, "serve the recording to a client on stdin/stdout instead of driving an agent")
			fs.String("speed", "1", "as agent: recorded spacing scale, a number (1 real time, 10 faster) or max")
			fs.StringArray("ignore", nil, "also ignore this JSON path in the comparison (glob: * one segment, ** any)")
			fs.Bool("no-default-ignore", false, "compare ids, sessionIds, _meta and timestamps too")
			fs.Bool("strict", false, "compare streamed chunks one by one instead of as joined text")
			durationFlag(fs, "timeout", 30*time.Second, "longest wait for one expected answer")
			durationFlag(fs, "grace", 2*time.Second, "after the replay, how long the agent gets before SIGTERM, then SIGKILL")
			fs.String("capture", "", "record the replay to this file (default: a new capture in the capture directory)")
			fs.Bool("no-capture", false, "do not record the replay")
			faultFlags(fs)
			fs.Lookup("faults").Usage += `; "recorded": the capture's own plan and seed, applied again`
		},
	}
}

func runReplay(fs *flag.FlagSet, args []string) (int, error) {
	asAgent, _ := fs.GetBool("as-agent")
	dash := fs.ArgsLenAtDash()
	if asAgent {
		if len(args) != 1 || dash >= 0 {
			return 2, usageErrorf("--as-agent takes one CAPTURE and no agent command, got %q", args)
		}
		return replayAsAgent(fs, args[0])
	}
	if dash != 1 || len(args) < 2 {
		return 2, usageErrorf("expected CAPTURE -- AGENT CMD…, got %q", args)
	}
	if path, _ := fs.GetString("capture"); path != "" {
		if _, err := os.Lstat(path); err == nil {
			return 2, usageErrorf("--capture %s already exists: choose another file, or remove it first", path)
		}
	}
	return replayAsClient(fs, args[0], args[1:])
}

// replaySignals ends the replay on SIGINT, SIGTERM or SIGHUP.
func replaySignals() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

func loadReplay(fs *flag.FlagSet, name string) (string, []protocol.Msg, error) {
	path, err := resolveCapture(fs, name)
	if err != nil {
		return "", nil, err
	}
	src, err := capture.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer src.Close()
	session, _ := fs.GetString("session")
	msgs, err := replay.Load(src, session)
	return path, msgs, err
}

func replayAsClient(fs *flag.FlagSet, name string, argv []string) (int, error) {
	path, rec, err := loadReplay(fs, name)
	if err != nil {
		return 2, err
	}
	plan, err := replayPlan(fs, path)
	if err != nil {
		return 2, err
	}
	rec = replayView(fs, rec)
	ctx, stop := replaySignals()
	defer stop()
	peer, w, err := startReplayPeer(ctx, fs, path, argv, plan)
	if err != nil {
		return 2, err
	}
	opts := replay.ClientOptions{Log: os.Stderr, Ignore: ignoreFlags(fs), PeerExit: peer.exitHow, Tap: peer.tap}
	opts.Strict, _ = fs.GetBool("strict")
	opts.Timeout, _ = fs.GetDuration("timeout")
	fmt.Fprintf(os.Stderr, "acpscope replay: %d recorded messages from %s against %s\n", len(rec), filepath.Base(path), argv[0])
	res, runErr := replay.RunClient(ctx, rec, peer.out, peer.in, opts)
	exit := peer.finish()
	finishReplayCapture(w, exit, peer.proxied)
	if runErr != nil {
		return 2, runErr
	}
	replay.WriteEntries(os.Stdout, res.Entries, "recorded", "replayed")
	for _, n := range res.Notes {
		fmt.Fprintf(os.Stdout, "! %s\n", n)
	}
	fmt.Fprintf(os.Stderr, "acpscope replay: sent %d, received %d, answered %s, %s rebound\n", res.Sent, res.Received,
		replay.Count(res.Answered, "agent request", "agent requests"), replay.Count(len(res.Bindings), "identifier", "identifiers"))
	if !res.Match() {
		fmt.Fprintf(os.Stderr, "acpscope replay: the agent's answers differ from the recording (%s)\n", replay.Count(len(res.Notes), "note", "notes"))
		return 1, nil
	}
	fmt.Fprintln(os.Stderr, "acpscope replay: matches the recording")
	return 0, nil
}

// replayPlan is the fault plan --faults names for a replay: a file, a
// ready-made plan, or "recorded", the capture's own plan and seed.
func replayPlan(fs *flag.FlagSet, path string) (*fault.Plan, error) {
	name, _ := fs.GetString("faults")
	if name != replayRecordedFaults {
		if name == "" {
			return nil, nil
		}
		plan, err := fault.Load(name)
		if err != nil {
			return nil, usageErrorf("--faults: %v", err)
		}
		return plan, nil
	}
	src, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	_, plan, err := recordedPlan(src.Meta(), captureRef(path))
	if err != nil {
		return nil, fmt.Errorf("--faults recorded: %w", err)
	}
	if plan == nil {
		return nil, usageErrorf("--faults recorded: %s was not made with --faults; name a plan instead", captureRef(path))
	}
	return plan, nil
}

// replayRecordedFaults is the --faults value that applies a capture's own
// fault plan again.
const replayRecordedFaults = "recorded"

// replayView picks what a replay plays and expects of a capture in which
// acpscope altered messages: with the recorded plan applied again, the
// agent's messages as the client received them; otherwise everything as
// each side sent it, saying that the faults are not reproduced.
func replayView(fs *flag.FlagSet, rec []protocol.Msg) []protocol.Msg {
	n := replay.CountAltered(rec)
	if n == 0 {
		return rec
	}
	if name, _ := fs.GetString("faults"); name == replayRecordedFaults {
		return replay.AsFaulted(rec)
	}
	fmt.Fprintf(os.Stderr, "acpscope replay: the capture holds %s acpscope altered; replaying what each side sent, without them (--faults recorded applies its plan again)\n",
		replay.Count(n, "message", "messages"))
	return replay.AsSent(rec)
}

// describeExit says how the agent ended, for a replay it left early; ""
// when it is still running a moment after its pipes closed.
func describeExit(proc *agent.Process) string {
	select {
	case <-proc.Done():
	case <-time.After(time.Second):
		return ""
	}
	st := proc.Wait()
	if st.Signal != 0 {
		return "was killed by " + st.SignalName()
	}
	return fmt.Sprintf("exited (status %d)", st.Code)
}

func streamOf(dir wire.Dir) capture.Stream {
	if dir == wire.DirClient {
		return capture.StreamClient
	}
	return capture.StreamAgent
}

// pumpStderr copies the agent's stderr to ours line by line and records
// it. It ends at EOF, when the agent and its children are gone.
func pumpStderr(r io.Reader, w *capture.Writer) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			os.Stderr.Write(line)
			if w != nil {
				w.Chunk(0, capture.StreamStderr, time.Now().UnixNano(), line)
			}
		}
		if err != nil {
			if w != nil {
				w.EndStream(0, capture.StreamStderr, time.Now().UnixNano())
			}
			return
		}
	}
}

// openReplayCapture records the replay like any other run; failing to
// does not stop the replay.
func openReplayCapture(fs *flag.FlagSet, of string, argv []string) *capture.Writer {
	if off, _ := fs.GetBool("no-capture"); off {
		return nil
	}
	path, _ := fs.GetString("capture")
	agent := agentName(argv)
	var err error
	if path == "" {
		dir, _ := fs.GetString("dir")
		if dir == "" {
			dir, err = capture.DefaultDir()
		}
		path = filepath.Join(dir, capture.NewName(agent, time.Now(), os.Getpid()))
	}
	var w *capture.Writer
	if err == nil {
		cwd, _ := os.Getwd()
		w, err = capture.Create(path, capture.WriterOptions{
			Meta: capture.Meta{ProxyVersion: version, Argv: argv, Cwd: cwd, Agent: agent, Transport: "replay",
				Notes: map[string]string{"replayOf": filepath.Base(of)}},
			NoFeed: true,
			Warn:   func(msg string) { fmt.Fprintln(os.Stderr, "acpscope replay: "+msg) },
		})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "acpscope replay: not recording the replay: %v\n", err)
		return nil
	}
	fmt.Fprintf(os.Stderr, "acpscope replay: recording the replay to %s\n", w.Path())
	return w
}

func finishReplayCapture(w *capture.Writer, exit agent.ExitStatus, proxied bool) {
	if w == nil {
		return
	}
	if !proxied { // the proxy ends the streams it recorded
		w.EndStream(0, capture.StreamAgent, time.Now().UnixNano())
	}
	w.UpdateMeta(func(m *capture.Meta) { m.Exit = &capture.Exit{Code: exit.Code, Signal: exit.SignalName()} })
	if err := w.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "acpscope replay: closing %s: %v\n", w.Path(), err)
	}
}

func replayAsAgent(fs *flag.FlagSet, name string) (int, error) {
	_, rec, err := loadReplay(fs, name)
	if err != nil {
		return 2, err
	}
	speedArg, _ := fs.GetString("speed")
	speed, err := parseSpeed(speedArg)
	if err != nil {
		return 2, err
	}
	ctx, stop := replaySignals()
	defer stop()
	opts := replay.AgentOptions{Speed: speed, Log: os.Stderr}
	opts.Timeout, _ = fs.GetDuration("timeout")
	res, err := replay.RunAgent(ctx, rec, os.Stdin, os.Stdout, opts)
	if err != nil && !errors.Is(err, context.Canceled) {
		return 2, err
	}
	fmt.Fprintf(os.Stderr, "acpscope replay: served %s, %d unmatched, %s\n", replay.Count(res.Served, "request", "requests"),
		res.Unmatched, replay.Count(res.Skipped, "recorded client message never came", "recorded client messages never came"))
	if res.Unmatched > 0 {
		return 1, nil
	}
	return 0, nil
}

// parseSpeed reads --speed: a positive number or "max" (no waiting).
func parseSpeed(s string) (float64, error) {
	if s == "max" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return 0, usageErrorf("--speed must be a positive number or max, got %q", s)
	}
	return f, nil
}
