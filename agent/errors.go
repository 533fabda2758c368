package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
)

// ErrCannotStart is wrapped by the error Start returns when the agent
// cannot be started at all (not found, not executable, empty command).
var ErrCannotStart = errors.New("cannot start agent")

// ExitCannotStart is the exit code for an agent that could not be started,
// as a shell uses for a command it cannot find.
const ExitCannotStart = 127

// Hints for StartError: where the user wrote the agent command, which is
// where they must look to fix it.
const (
	HintEditorConfig = "check the command in your editor's agent config"
	HintServe        = "check the agent command given to 'acpscope serve' after '--'"
	HintReplay       = "check the agent command given to 'acpscope replay' after '--'"
)

// StartError says why an agent could not be started, in one line that
// tells the user what to check.
type StartError struct {
	Command string // argv[0] as the user wrote it
	Err     error  // the underlying cause
	Hint    string // what to check; HintEditorConfig when empty
}

func (e *StartError) Error() string {
	cause := "no command given"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	hint := e.Hint
	if hint == "" {
		hint = HintEditorConfig
	}
	return fmt.Sprintf("cannot start agent %q: %s; %s", e.Command, cause, hint)
}

// Unwrap lets errors.Is find both ErrCannotStart and the cause.
func (e *StartError) Unwrap() []error { return []error{ErrCannotStart, e.Err} }

// ExitCode is the code the proxy exits with: 127.
func (e *StartError) ExitCode() int { return ExitCannotStart }

// CheckCommand looks argv[0] up as exec does, so a command that cannot run
// is reported once at startup instead of on every connection. The error
// is a *StartError carrying hint.
func CheckCommand(argv []string, hint string) error {
	if len(argv) == 0 || argv[0] == "" {
		return &StartError{Err: errors.New("no command given after --"), Hint: hint}
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "no such file or directory", not "stat /x: …"
		} else if u := errors.Unwrap(err); u != nil {
			err = u
		}
		return &StartError{Command: argv[0], Err: err, Hint: hint}
	}
	return nil
}

// WithHint sets the hint of a *StartError inside err; other errors pass
// unchanged.
func WithHint(err error, hint string) error {
	var se *StartError
	if errors.As(err, &se) && se.Hint == "" {
		se.Hint = hint
	}
	return err
}
