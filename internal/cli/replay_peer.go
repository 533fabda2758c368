package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/proxy"
	"github.com/acpscope/acpscope/wire"
	flag "github.com/spf13/pflag"
)

// replayPeer is the agent a replay drives as its client: started
// directly, or, when a fault plan applies, behind the stdio proxy run in
// this process, so that the plan alters the traffic exactly as it does
// between an editor and an agent, and records what it did.
type replayPeer struct {
	out     io.Reader      // the agent's output, as the replay reads it
	in      io.WriteCloser // the agent's input
	tap     func(dir wire.Dir, t int64, line []byte)
	exitHow func() string           // how the agent ended, "" while it runs
	finish  func() agent.ExitStatus // ends the agent and waits for it
	proxied bool
}

// startReplayPeer starts the agent and the replay's capture (nil with
// --no-capture, or when it cannot be made).
func startReplayPeer(ctx context.Context, fs *flag.FlagSet, of string, argv []string, plan *fault.Plan) (*replayPeer, *capture.Writer, error) {
	grace, _ := fs.GetDuration("grace")
	if plan == nil && !fs.Changed("allow-intercept") {
		proc, err := agent.Start(ctx, argv, agent.Options{Grace: grace})
		if err != nil {
			return nil, nil, replayStartError(err)
		}
		w := openReplayCapture(fs, of, argv)
		return directPeer(proc, w), w, nil
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, nil, replayStartError(&agent.StartError{Command: argv[0], Err: err})
	}
	w := openReplayCapture(fs, of, argv)
	run, err := startPlan(fs, w, plan)
	if err != nil {
		finishReplayCapture(w, agent.ExitStatus{Code: agent.ExitCannotStart}, true)
		return nil, nil, err
	}
	return proxiedPeer(ctx, argv, grace, w, run), w, nil
}

func replayStartError(err error) error {
	var se *agent.StartError
	if errors.As(err, &se) {
		se.Hint = agent.HintReplay // the command is replay's, not an editor's
	}
	return err
}

// directPeer drives proc over its own pipes; the replay records what it
// sends and reads, and the agent's stderr.
func directPeer(proc *agent.Process, w *capture.Writer) *replayPeer {
	stderrDone := make(chan struct{})
	go func() { // stderr pump: the agent's log to ours, and into the capture
		defer close(stderrDone)
		pumpStderr(proc.Stderr, w)
	}()
	p := &replayPeer{out: proc.Stdout, in: proc.Stdin, exitHow: func() string { return describeExit(proc) }}
	if w != nil {
		p.tap = func(dir wire.Dir, t int64, line []byte) { w.Chunk(0, streamOf(dir), t, line) }
	}
	p.finish = func() agent.ExitStatus {
		exit := proc.Shutdown()
		proc.Stdout.Close()
		<-stderrDone
		return exit
	}
	return p
}

// proxiedPeer runs the stdio proxy with run's fault plan between the
// replay and the agent, over in-process pipes. The proxy records, as
// it does for an editor: the replay's own tap is not needed.
func proxiedPeer(ctx context.Context, argv []string, grace time.Duration, w *capture.Writer, run *faultRun) *replayPeer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	cfg := proxy.StdioConfig{Argv: argv, Grace: grace, Stdin: inR, Stdout: outW, Stderr: os.Stderr,
		Signals: make(chan os.Signal), Intercept: run.interceptor()}
	if w != nil {
		cfg.Recorder = w
	}
	var res proxy.Result
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		var err error
		res, err = proxy.Stdio(ctx, cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "acpscope replay: %v\n", err)
		}
		// Whatever the replay still writes or waits for ends here.
		inR.CloseWithError(errors.New("the agent has ended"))
		outW.Close()
	}()
	return &replayPeer{out: outR, in: inW, proxied: true,
		exitHow: func() string {
			select {
			case <-ended:
			case <-time.After(time.Second):
				return ""
			}
			if res.Exit.Signal != 0 {
				return "was killed by " + res.Exit.SignalName()
			}
			return fmt.Sprintf("exited (status %d)", res.Exit.Code)
		},
		finish: func() agent.ExitStatus {
			inW.Close()                  // the agent's stdin ends
			go io.Copy(io.Discard, outR) // what it still says goes nowhere, but never blocks it
			<-ended
			run.stop()
			return res.Exit
		},
	}
}
