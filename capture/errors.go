package capture

import "errors"

// Sentinel errors. Messages say what to do next where there is something.
var (
	// ErrLive: the capture is held by a running proxy; read it through
	// its live feed (DialLive) instead.
	ErrLive = errors.New("capture is being written by a running proxy")
	// ErrCorrupt: the file is not a readable acpscope capture.
	ErrCorrupt = errors.New("capture file is corrupt or truncated")
	// ErrNotCapture: the file is a bbolt database but not ours.
	ErrNotCapture = errors.New("not an acpscope capture")
	// ErrNotFound: no capture by that name.
	ErrNotFound = errors.New("no such capture")
	// ErrNoRecord: no record with that sequence number.
	ErrNoRecord = errors.New("no such record")
	// ErrClosed: the writer or reader was closed.
	ErrClosed = errors.New("capture closed")
	// ErrBadOption: an export or selection option names something the
	// capture lacks, or does not parse (the caller's to fix).
	ErrBadOption = errors.New("bad option")
	// ErrNotPrivate: a directory meant for the live feed's socket is not
	// this user's alone (another owner, open mode or a symbolic link).
	ErrNotPrivate = errors.New("directory is not private")
)

// optionError is an ErrBadOption whose text is its own message alone.
type optionError struct{ error }

func (optionError) Is(target error) bool { return target == ErrBadOption }

func badOption(err error) error { return optionError{err} }
