package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is how long the shutdown ladder waits at each step. Real
// agents (codex-acp) never exit on stdin EOF, so the ladder must go on to
// signals; a few seconds lets well-behaved ones save their state first.
const DefaultGrace = 5 * time.Second

// Options configure Start. Zero values take the defaults.
type Options struct {
	// Grace is the wait at each step of the shutdown ladder
	// (default DefaultGrace).
	Grace time.Duration
	// Dir is the agent's working directory (default: ours).
	Dir string
	// Env is the agent's environment (default: ours).
	Env []string
}

// Process is a running agent process in its own process group, with pipes
// to its stdin, stdout and stderr.
type Process struct {
	// Stdin, Stdout and Stderr are our ends of the agent's standard
	// streams. Stdout and Stderr reach EOF when every process holding
	// the write end (the agent and any child that inherited it) is gone.
	Stdin  *os.File
	Stdout *os.File
	Stderr *os.File

	cmd   *exec.Cmd
	pgid  int
	grace time.Duration

	done   chan struct{} // closed by the reaper once the process is reaped
	status ExitStatus    // written by the reaper before done closes

	stdinOnce sync.Once
}

// Start starts argv[0] with the remaining arguments, without a shell,
// in a new process group. A command that cannot be started returns a
// *StartError (exit code 127). When ctx is cancelled the agent is stopped
// through the shutdown ladder.
func Start(ctx context.Context, argv []string, opts Options) (*Process, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, &StartError{Command: "", Err: errors.New("no command given after --")}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return nil, startError(argv[0], cmd.Err)
	}
	cmd.Dir, cmd.Env = opts.Dir, opts.Env
	cmd.SysProcAttr = agentProcAttr()
	a := &Process{cmd: cmd, grace: opts.Grace, done: make(chan struct{})}
	if a.grace <= 0 {
		a.grace = DefaultGrace
	}
	theirs, err := a.makePipes()
	if err != nil {
		return nil, fmt.Errorf("making pipes for the agent: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs[0], theirs[1], theirs[2]
	err = cmd.Start()
	for _, f := range theirs {
		f.Close() // the child holds its own copies now
	}
	if err != nil {
		a.closeOurs()
		return nil, startError(argv[0], err)
	}
	a.pgid = cmd.Process.Pid // Setpgid with Pgid 0: the group is named after the leader
	go a.reap()              // reaper: ends when the process is reaped
	if ctx.Done() != nil {
		go a.stopOnCancel(ctx) // ends when ctx is done or the agent exits
	}
	return a, nil
}

// makePipes creates the three pipes and returns the child's ends in the
// order stdin, stdout, stderr. Our ends are os.Pipe files, so they are
// pollable and support deadlines.
func (a *Process) makePipes() ([3]*os.File, error) {
	var theirs [3]*os.File
	var err error
	if theirs[0], a.Stdin, err = pipe(); err != nil {
		return theirs, err
	}
	if a.Stdout, theirs[1], err = pipe(); err != nil {
		theirs[0].Close()
		a.closeOurs()
		return theirs, err
	}
	if a.Stderr, theirs[2], err = pipe(); err != nil {
		theirs[0].Close()
		theirs[1].Close()
		a.closeOurs()
		return theirs, err
	}
	return theirs, nil
}

// pipe returns (read end, write end). Larger pipe buffers mean fewer
// reads and writes per megabyte; failure to enlarge is harmless.
func pipe() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err == nil {
		growPipe(w)
	}
	return r, w, err
}

func (a *Process) closeOurs() {
	for _, f := range []*os.File{a.Stdin, a.Stdout, a.Stderr} {
		if f != nil {
			f.Close()
		}
	}
}

// startError turns what os/exec says into one clear line.
func startError(name string, err error) error {
	var ee *exec.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &ee):
		err = ee.Err
	case errors.As(err, &pe):
		err = pe.Err
	}
	return &StartError{Command: name, Err: err}
}

// reap waits for the process and records how it ended.
func (a *Process) reap() {
	awaitExit(a.pgid)
	err := a.cmd.Wait()
	a.status = exitStatus(a.cmd.ProcessState, err)
	close(a.done)
}

func (a *Process) stopOnCancel(ctx context.Context) {
	select {
	case <-ctx.Done():
		a.Shutdown()
	case <-a.done:
	}
}

// Grace returns the wait at each step of the shutdown ladder.
func (a *Process) Grace() time.Duration { return a.grace }

// Pid returns the agent's process id, which is also its process group id.
func (a *Process) Pid() int { return a.pgid }

// Done is closed once the agent process has exited and been reaped.
func (a *Process) Done() <-chan struct{} { return a.done }

// Wait blocks until the agent exits and returns how it ended.
func (a *Process) Wait() ExitStatus {
	<-a.done
	return a.status
}

// Exited reports whether the agent has exited.
func (a *Process) Exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// CloseStdin closes the agent's stdin, telling it the editor is gone. It
// is idempotent.
func (a *Process) CloseStdin() error {
	var err error
	a.stdinOnce.Do(func() { err = a.Stdin.Close() })
	return err
}

// Signal sends sig to the agent's whole process group, so children the
// agent spawned (node, python) receive it too. A group that is already
// gone is not an error.
func (a *Process) Signal(sig syscall.Signal) error {
	err := signalGroup(a.pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Shutdown stops the agent and returns how it ended: close its stdin,
// then Escalate. It may be called concurrently and more than once.
func (a *Process) Shutdown() ExitStatus {
	a.CloseStdin()
	return a.Escalate()
}

// Escalate waits Grace, then Terminates the agent, and returns how it
// ended. It returns as soon as the agent has exited at any step. Used
// alone (stdin left open) after a signal was forwarded: the agent gets its
// chance to act on the signal, and cannot linger past two grace periods.
func (a *Process) Escalate() ExitStatus {
	if a.waitFor(a.grace) {
		return a.status
	}
	return a.Terminate()
}

// Terminate sends SIGTERM to the group, waits Grace, sends SIGKILL to the
// group, and returns how the agent ended, as soon as it has exited.
func (a *Process) Terminate() ExitStatus {
	a.Signal(syscall.SIGTERM)
	if a.waitFor(a.grace) {
		return a.status
	}
	a.Signal(syscall.SIGKILL)
	return a.Wait()
}

// waitFor waits up to d for the agent to exit and reports whether it did.
func (a *Process) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.done:
		return true
	case <-t.C:
		return false
	}
}

// Kill sends SIGKILL to the agent's process group at once. Use it for
// children left behind after the agent itself has exited.
func (a *Process) Kill() error { return a.Signal(syscall.SIGKILL) }

// Forward passes a signal this process received on to the agent's group.
func (a *Process) Forward(sig os.Signal) error { return a.Signal(toSyscall(sig)) }

// GroupAlive reports whether a live process of the agent's group is
// still there: the agent, or children it left behind.
func (a *Process) GroupAlive() bool { return groupAlive(a.pgid) }

// StopLeftovers sends SIGTERM, then after Grace SIGKILL, to what remains
// of the agent's process group (children that outlived it), and returns
// once the group is gone or has been sent SIGKILL.
func (a *Process) StopLeftovers() {
	a.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(a.grace)
	for groupAlive(a.pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if groupAlive(a.pgid) {
		a.Kill()
	}
}
