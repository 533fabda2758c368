package door

import "errors"

// Sentinel errors of the listener and its guard: usage errors, found
// before anything listens, except ErrAddrInUse.
var (
	// ErrAddrInUse is wrapped when the --listen address is taken.
	ErrAddrInUse = errors.New("address in use")
	// ErrListenAddr is wrapped when a --listen address is not a
	// HOST:PORT that can be listened on.
	ErrListenAddr = errors.New("bad listen address")
	// ErrAllowList is wrapped when an --allow-host or --allow-origin
	// value is not a host or an origin.
	ErrAllowList = errors.New("bad allow-list entry")
)

// adviceError is one complete line for the user that still matches its
// sentinel with errors.Is, without the sentinel's words repeated at the
// end as %w would.
type adviceError struct {
	msg      string
	sentinel error
}

func (e *adviceError) Error() string { return e.msg }
func (e *adviceError) Unwrap() error { return e.sentinel }
