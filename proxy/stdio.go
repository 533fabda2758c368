package proxy

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/internal/tap"
)

// DefaultBufferSize is each pump's read buffer. Reads return what the
// pipe holds, up to this size; a bigger buffer only means fewer calls.
const DefaultBufferSize = 256 << 10

// StdioConfig configures RunStdio. Only Argv is required. Which capture
// file to write (--capture, --dir, --no-capture, --name) is decided by the
// caller, which passes the resulting Recorder.
type StdioConfig struct {
	// Argv is the agent's command line; argv[0] is looked up in PATH and
	// run without a shell.
	Argv []string
	// Dir and Env are the agent's working directory and environment
	// (default: ours).
	Dir string
	Env []string
	// Grace is the wait at each step of the shutdown ladder (--grace,
	// default agent.DefaultGrace). After the editor closes stdin, the first
	// step is Grace of silence: counted from the agent's last output on
	// stdout or stderr, and not while that output is still being written
	// to the editor.
	Grace time.Duration
	// Recorder receives the forwarded bytes; nil records nothing.
	Recorder tap.Recorder
	// Conn is the connection number passed to the Recorder (0 for the
	// single stdio connection).
	Conn uint32
	// Stdin, Stdout and Stderr are the editor's side (default: ours).
	// Stdout is closed when the agent's output ends, if it is an
	// io.Closer, so the editor sees EOF.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Signals delivers the signals to forward to the agent's process
	// group. Nil subscribes to SIGINT, SIGTERM and SIGHUP of this process.
	Signals <-chan os.Signal
	// BufferSize is each pump's read buffer (default DefaultBufferSize).
	BufferSize int
	// Intercept, when set, sees every whole message and decides what is
	// delivered (a fault plan, messages held or sent by hand); the
	// stdin and stdout streams are then framed into lines. Nil, the
	// default, forwards bytes exactly as they come.
	Intercept tap.Interceptor
}

// End names the side that ended a proxy run first.
type End uint8

// The ways a proxy run can end.
const (
	EndNone    End = iota
	EndClient      // the editor closed our stdin (or stopped reading our stdout)
	EndAgent       // the agent exited
	EndSignal      // we received a signal and forwarded it
	EndContext     // the caller's context was cancelled
)

func (e End) String() string {
	switch e {
	case EndClient:
		return "client"
	case EndAgent:
		return "agent"
	case EndSignal:
		return "signal"
	case EndContext:
		return "context"
	}
	return "none"
}

// Result is what a proxy run did.
type Result struct {
	// Exit is how the agent ended; Exit.Code is what the proxy should
	// exit with (127 when the agent could not be started).
	Exit agent.ExitStatus
	// First is the side that ended first: the capture's metadata says
	// whether the editor or the agent hung up.
	First End
	// Signal is the last signal forwarded to the agent, nil if none.
	Signal os.Signal
	// Pid is the agent's process id (0 if it never started).
	Pid int
	// ClientBytes, AgentBytes and StderrBytes count what was read from
	// each stream (and forwarded, unless ...WriteErr says otherwise).
	ClientBytes, AgentBytes, StderrBytes int64
	// StdoutErr is set when writing to our stdout failed (the editor
	// stopped reading); the agent was then shut down.
	StdoutErr error
}

// RunStdio runs the stdio proxy until the agent has exited and its output
// has drained, and returns the code the proxy should exit with. The error
// is non-nil only when the agent could not be started (a *agent.StartError, exit
// code 127) or could not be waited for.
func RunStdio(ctx context.Context, cfg StdioConfig) (exitCode int, err error) {
	res, err := Stdio(ctx, cfg)
	return res.Exit.Code, err
}

// Stdio is RunStdio with the details of how the run ended.
func Stdio(ctx context.Context, cfg StdioConfig) (Result, error) {
	cfg = cfg.withDefaults()
	sigs := cfg.Signals
	if sigs == nil {
		c, stop := agent.SubscribeSignals()
		defer stop()
		sigs = c
	}
	a, err := agent.Start(context.Background(), cfg.Argv, agent.Options{Grace: cfg.Grace, Dir: cfg.Dir, Env: cfg.Env})
	if err != nil {
		return Result{Exit: agent.ExitStatus{Code: agent.ExitCannotStart, Err: err}}, err
	}
	s := newSession(cfg, a)
	res := s.run(ctx, sigs)
	return res, res.Exit.Err
}

func (c StdioConfig) withDefaults() StdioConfig {
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Grace <= 0 {
		c.Grace = agent.DefaultGrace
	}
	if c.BufferSize <= 0 {
		c.BufferSize = DefaultBufferSize
	}
	return c
}
