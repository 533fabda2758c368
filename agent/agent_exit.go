package agent

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// ExitStatus is how the agent ended.
type ExitStatus struct {
	// Code is what the proxy should exit with: the agent's exit code, or
	// 128+N when signal N killed it (as shells report it).
	Code int
	// Signal is the signal that killed the agent, 0 when it exited.
	Signal syscall.Signal
	// Err is set when the process could not be waited for at all.
	Err error
}

// SignalName returns the signal's name ("SIGTERM"), or "" when the agent
// was not killed by a signal.
func (s ExitStatus) SignalName() string {
	if s.Signal == 0 {
		return ""
	}
	if n := unix.SignalName(s.Signal); n != "" {
		return n
	}
	return s.Signal.String()
}

func exitStatus(ps *os.ProcessState, err error) ExitStatus {
	if ps == nil {
		return ExitStatus{Code: 1, Err: err}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitStatus{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		// The process ended but Wait failed for another reason (a
		// copying goroutine; we use none). Keep the real code.
		return ExitStatus{Code: ps.ExitCode(), Err: err}
	}
	return ExitStatus{Code: ps.ExitCode()}
}
