package fault

import (
	"errors"
	"fmt"
)

// ErrPlan is wrapped by every mistake found in a fault plan.
var ErrPlan = errors.New("bad fault plan")

// PlanError is one mistake in a plan: where (file, line) and which field
// (rules[2].delay), and what to write instead.
type PlanError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *PlanError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field != "" {
		return where + ": " + e.Field + ": " + e.Msg
	}
	return where + ": " + e.Msg
}

func (e *PlanError) Unwrap() error { return ErrPlan }

// ErrNoControl is returned when a capture has no control socket: its
// proxy is gone, or was started without a capture.
var ErrNoControl = errors.New("no control socket")
