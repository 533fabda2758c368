package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

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

// ErrCannotConnect is wrapped when connect never got a connection: the
// server is not there, or the URL names no ACP endpoint. Unlike
// ErrConnectionLost, nothing was lost and the fix is in the URL or the
// server, not in the editor.
var ErrCannotConnect = errors.New("cannot connect to the server")

// ErrListenAddr is wrapped when a --listen address is not a HOST:PORT
// that can be listened on (a usage error, found before anything opens).
var ErrListenAddr = errors.New("bad listen address")

// ErrAllowList is wrapped when an --allow-host or --allow-origin value
// is not a host or an origin (a usage error, found before listening).
var ErrAllowList = errors.New("bad allow-list entry")

// adviceError is one complete line for the user that still matches its
// sentinel with errors.Is, without the sentinel's words repeated at the
// end as %w would.
type adviceError struct {
	msg      string
	sentinel error
}

func (e *adviceError) Error() string { return e.msg }
func (e *adviceError) Unwrap() error { return e.sentinel }

// connectError is connect's one line for a connection never made.
func connectError(msg string) error { return &adviceError{msg, ErrCannotConnect} }

// unreachable says the server at u could not be reached at all; cause is
// the dial error (url.Error's wrapping, which repeats the URL, dropped).
func unreachable(u *url.URL, cause error) error {
	var ue *url.Error
	if errors.As(cause, &ue) {
		cause = ue.Err
	}
	return connectError(fmt.Sprintf("cannot reach the server at %s: %v; is 'acpscope serve' (or the agent's own server) running there?", u, cause))
}

// refusedAtStart says what a server answered to the first request of a
// connection when that was not a connection: a 404 means the URL's path
// is not the endpoint; other statuses are given with the server's words.
func refusedAtStart(u *url.URL, status int, body string) error {
	where := *u
	where.Path, where.RawPath, where.RawQuery = "", "", ""
	if status == http.StatusNotFound {
		return connectError(fmt.Sprintf("the server at %s answered 404 Not Found for the path %s: check the URL (the ACP endpoint is usually /acp)", where.String(), pathOf(u)))
	}
	msg := fmt.Sprintf("the server at %s answered %d %s", u, status, http.StatusText(status))
	if body != "" {
		msg += ": " + body
	}
	if status == http.StatusUnauthorized {
		msg += "; give connect the server's token with --auth-token-file FILE or $ACPSCOPE_AUTH_TOKEN"
	}
	return connectError(msg)
}

func pathOf(u *url.URL) string {
	if u.Path == "" {
		return "/"
	}
	return u.EscapedPath()
}
