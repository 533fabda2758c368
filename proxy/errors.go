package proxy

import (
	"errors"
	"fmt"
)

// ErrCannotStart is wrapped by the error StartAgent returns when the agent
// cannot be started at all (not found, not executable, empty command).
var ErrCannotStart = errors.New("cannot start agent")

// ExitCannotStart is the exit code for an agent that could not be started,
// as a shell uses for a command it cannot find.
const ExitCannotStart = 127

// StartError says why an agent could not be started, in one line that
// tells the user what to check.
type StartError struct {
	Command string // argv[0] as the user wrote it
	Err     error  // the underlying cause
}

func (e *StartError) Error() string {
	cause := "no command given"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	return fmt.Sprintf("cannot start agent %q: %s; check the command in your editor's agent config", e.Command, cause)
}

// Unwrap lets errors.Is find both ErrCannotStart and the cause.
func (e *StartError) Unwrap() []error { return []error{ErrCannotStart, e.Err} }

// ExitCode is the code the proxy exits with: 127.
func (e *StartError) ExitCode() int { return ExitCannotStart }
