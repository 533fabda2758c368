package replay

import "errors"

// Sentinel errors.
var (
	// ErrMismatch: the replay ran, and what came back differs from the
	// recording (exit status 1).
	ErrMismatch = errors.New("replay does not match the recording")
	// ErrTimeout: the peer did not send what the recording expects in
	// time; raise --timeout if the agent is just slow.
	ErrTimeout = errors.New("timed out waiting for the peer")
	// ErrNoMessages: the capture (or the chosen session) holds no
	// protocol messages to replay.
	ErrNoMessages = errors.New("no protocol messages to replay")
	// ErrPeerGone: the peer closed its output before the replay ended.
	ErrPeerGone = errors.New("peer closed the connection")
)

// GoneError says the agent ended before it answered anything, and what
// the replay was waiting for: nothing could be compared (exit status 2).
type GoneError struct {
	Why string // e.g. "the agent exited (status 1) before answering initialize [0]"
}

func (e *GoneError) Error() string { return e.Why }

// Unwrap lets errors.Is find ErrPeerGone.
func (e *GoneError) Unwrap() error { return ErrPeerGone }
