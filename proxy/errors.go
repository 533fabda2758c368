package proxy

import "errors"

// ErrUpstreamURL is wrapped when --upstream is not an http, https, ws or
// wss URL, or --upstream-protocol names no protocol.
var ErrUpstreamURL = errors.New("bad upstream URL")
