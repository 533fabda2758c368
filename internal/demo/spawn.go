package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// stopGrace is how long ClientOverPipes waits at each step of the
// shutdown ladder (stdin closed, then SIGTERM, then SIGKILL); a variable
// so tests can shorten it.
var stopGrace = 5 * time.Second

// ClientOverPipes spawns argv (no shell), runs the demo client over the
// process's stdin and stdout, passes its stderr through to stderr (nil
// discards), and waits for it to exit: after the client closes the
// process's stdin it gets a grace period, then SIGTERM, then SIGKILL.
// A non-zero exit is returned as an error wrapping *exec.ExitError,
// together with the summary. `acpscope demo` uses it to drive
// `acpscope --capture FILE -- acpscope demo-agent`.
func ClientOverPipes(ctx context.Context, argv []string, stderr io.Writer, opts ClientOptions) (Summary, error) {
	if len(argv) == 0 {
		return Summary{}, errors.New("no command to run the demo client against")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Summary{}, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Summary{}, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	if err := cmd.Start(); err != nil {
		return Summary{}, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	exited := make(chan error, 1)
	sum, runErr := RunClient(ctx, stdout, stdin, opts)
	// RunClient has closed stdin and finished reading stdout (or closed
	// it), so Wait may now close the pipes.
	go func() { exited <- cmd.Wait() }() // waiter; ends when the process does
	if ctx.Err() != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM) // given up: no need to wait a grace period first
	}
	waitErr := stopLadder(cmd, exited)
	if waitErr != nil {
		// An agent that died early makes the client fail too; say both.
		return sum, errors.Join(runErr, fmt.Errorf("%s: %w", argv[0], waitErr))
	}
	return sum, runErr
}

// stopLadder waits for the process, nudging it with SIGTERM and then
// SIGKILL if it does not exit on its own.
func stopLadder(cmd *exec.Cmd, exited <-chan error) error {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case err := <-exited:
			return err
		case <-time.After(stopGrace):
			_ = cmd.Process.Signal(sig)
		}
	}
	return <-exited
}
