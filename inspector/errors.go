package inspector

import "errors"

// ErrNoTerminal: Run was asked to draw on a terminal and there is none.
var ErrNoTerminal = errors.New("the inspector needs a terminal; use `acpscope dump` to print a capture")
