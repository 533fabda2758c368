package proxy

import "errors"

// Sentinel errors of the HTTP and WebSocket transports.
var (
	// ErrAddrInUse is wrapped when the --listen address is taken.
	ErrAddrInUse = errors.New("address in use")
	// ErrUpstreamURL is wrapped when --upstream or connect's URL is not
	// an http, https, ws or wss URL.
	ErrUpstreamURL = errors.New("bad upstream URL")
	// ErrConnectionLost is wrapped when connect loses the server: the
	// connection's state lives there, so connect does not reconnect.
	ErrConnectionLost = errors.New("connection to the agent lost")
)
