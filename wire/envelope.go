package wire

import (
	"net/http"
	"strconv"
)

// Envelope is the HTTP context a frame travelled in: which request or
// stream carried it and the Acp-* headers that route it. Stdio frames have
// none. Credentials (Authorization, Cookie, Set-Cookie) are never kept in
// clear: Headers holds them as "<redacted>" or a fingerprint.
type Envelope struct {
	// Method and Path of the HTTP request ("POST", "/acp").
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Proto is the HTTP version the exchange used, as Go names it
	// ("HTTP/1.1", "HTTP/2.0"); empty in captures made before it was
	// recorded. The RFD requires HTTP/2 for Streamable HTTP.
	Proto string `json:"proto,omitempty"`
	// Status of the HTTP response, when known (200, 202, 101, 4xx…).
	Status int `json:"status,omitempty"`
	// Stream names what carried the frame; one of the Stream* constants.
	Stream string `json:"stream,omitempty"`
	// ConnectionID and SessionID are the Acp-Connection-Id and
	// Acp-Session-Id headers in force for the frame.
	ConnectionID string `json:"connectionId,omitempty"`
	SessionID    string `json:"sessionId,omitempty"`
	// Headers holds the other headers worth seeing, credentials redacted.
	Headers map[string]string `json:"headers,omitempty"`
	// EventID is the SSE event id, when the server sent one.
	EventID string `json:"eventId,omitempty"`
}

// The streams a frame may arrive on over HTTP.
const (
	StreamPOST        = "post"        // a POST request body (client→agent)
	StreamPOSTReply   = "post-reply"  // a POST response body (e.g. initialize)
	StreamPOSTSSE     = "post-sse"    // an SSE event in a POST response
	StreamConnection  = "sse-conn"    // the connection-scoped GET stream
	StreamSession     = "sse-session" // a session-scoped GET stream
	StreamWebSocket   = "ws"          // a WebSocket message
	StreamHTTPControl = "http"        // no message: a status-only exchange
)

// Exchange describes the HTTP exchange of a status-only frame (Stream
// StreamHTTPControl: a 202 to a POST, a stream opened, a 101) as
// "POST /acp 202 Accepted", and reports whether e is one. Such a frame
// carries no message, so viewers show this instead of an empty line.
func (e *Envelope) Exchange() (string, bool) {
	if e == nil || e.Stream != StreamHTTPControl {
		return "", false
	}
	s := e.Method
	if e.Path != "" {
		s += " " + e.Path
	}
	if e.Status != 0 {
		s += " " + strconv.Itoa(e.Status)
		if text := http.StatusText(e.Status); text != "" {
			s += " " + text
		}
	}
	return s, true
}
