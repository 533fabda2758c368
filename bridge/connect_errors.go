package bridge

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Sentinel errors of connect.
var (
	// ErrUpstreamURL is wrapped when connect's URL is not an http,
	// https, ws or wss URL.
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

// connectError is connect's one line for a connection never made: a
// complete line for the user that still matches ErrCannotConnect with
// errors.Is, without the sentinel's words repeated at the end as %w would.
type connectError string

func (e connectError) Error() string { return string(e) }
func (e connectError) Unwrap() error { return ErrCannotConnect }

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
