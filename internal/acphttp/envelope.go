package acphttp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
)

// ConnTable numbers transport connections: one number per
// Acp-Connection-Id (or, in goose's single-header dialect, per
// Acp-Session-Id used as the connection id), per WebSocket, and per
// request that names no connection yet (an initialize), whose number is
// bound to the id its response reveals. Numbers start at 1; 0 is stdio's.
type ConnTable struct {
	mu   sync.Mutex
	last uint32
	byID map[string]uint32
}

// fresh returns a new connection number.
func (t *ConnTable) Fresh() uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last++
	return t.last
}

// lookup returns the number for id, making one when id is new.
func (t *ConnTable) Lookup(id string) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n, ok := t.byID[id]; ok {
		return n
	}
	if t.byID == nil {
		t.byID = map[string]uint32{}
	}
	t.last++
	t.byID[id] = t.last
	return t.last
}

// bind makes id name conn, unless id already names a connection.
func (t *ConnTable) Bind(id string, conn uint32) {
	if id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = map[string]uint32{}
	}
	if _, ok := t.byID[id]; !ok {
		t.byID[id] = conn
	}
}

// forRequest returns the connection a request belongs to: by its
// Acp-Connection-Id, else by its Acp-Session-Id (goose's older dialect),
// else a fresh number.
func (t *ConnTable) ForRequest(h http.Header) uint32 {
	if id := ConnKey(h); id != "" {
		return t.Lookup(id)
	}
	return t.Fresh()
}

// ConnKey is the header value that identifies a connection.
func ConnKey(h http.Header) string {
	if id := h.Get(HeaderConnectionID); id != "" {
		return id
	}
	return h.Get(HeaderSessionID)
}

// The ACP transport headers.
const (
	HeaderConnectionID    = "Acp-Connection-Id"
	HeaderSessionID       = "Acp-Session-Id"
	HeaderProtocolVersion = "Acp-Protocol-Version"
)

// keptHeaders are the headers, besides Acp-Connection-Id and
// Acp-Session-Id, worth keeping in an envelope. Credentials among them
// are stored as fingerprints (see redactHeader).
var keptHeaders = []string{
	"Content-Type", "Accept", "Last-Event-Id", "Origin", "Upgrade",
	"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key",
	"Sec-Websocket-Protocol", "Www-Authenticate", "Location", "Content-Encoding",
}

// EnvelopeHeaders picks the headers to store, credentials redacted.
func EnvelopeHeaders(h http.Header) map[string]string {
	var out map[string]string
	put := func(name, value string) {
		if out == nil {
			out = map[string]string{}
		}
		out[strings.ToLower(name)] = value
	}
	for _, name := range keptHeaders {
		if vs := h.Values(name); len(vs) > 0 {
			red := make([]string, len(vs))
			for i, v := range vs {
				red[i] = redactHeader(name, v)
			}
			put(name, strings.Join(red, ", "))
		}
	}
	for name, vs := range h {
		if strings.HasPrefix(name, "Acp-") && name != HeaderConnectionID && name != HeaderSessionID {
			put(name, strings.Join(vs, ", "))
		}
	}
	return out
}

// ResponseHeaders picks the headers of a response frame: the response's,
// plus the request's that the response lacks (Accept, Last-Event-Id,
// Authorization), since a GET or DELETE has no request frame of its own.
func ResponseHeaders(resp, req http.Header) map[string]string {
	out := EnvelopeHeaders(resp)
	for k, v := range EnvelopeHeaders(req) {
		if _, ok := out[k]; !ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// redactHeader replaces credentials by a keyed fingerprint, so a reader
// of a capture can tell whether two requests used the same token without
// learning it. The scheme of Authorization and the names of cookies stay
// visible.
func redactHeader(name, value string) string {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization":
		if scheme, cred, ok := strings.Cut(value, " "); ok {
			return scheme + " " + Fingerprint(cred)
		}
		return Fingerprint(value)
	case "cookie":
		return redactCookies(value, false)
	case "set-cookie":
		return redactCookies(value, true)
	case "sec-websocket-protocol", "x-api-key":
		// Subprotocols are a known place to smuggle tokens in browsers.
		return Fingerprint(value)
	}
	return value
}

// redactCookies keeps cookie names and attributes, fingerprints values.
// In a Set-Cookie header only the first pair is the cookie; the rest are
// attributes.
func redactCookies(value string, setCookie bool) string {
	parts := strings.Split(value, ";")
	for i, p := range parts {
		name, val, ok := strings.Cut(p, "=")
		if !ok || (setCookie && i > 0) {
			continue
		}
		parts[i] = name + "=" + Fingerprint(val)
	}
	return strings.Join(parts, ";")
}

// fingerprintKey keys every fingerprint this process makes. It is made
// when the first is needed and lives only in memory: a capture is
// written by one process, and "same token or another" is all a reader of
// it needs to learn. Stored beside the capture, the key would only let
// whoever holds the file test guesses of a token offline, which an
// unkeyed hash (sha256 of "wrong" is 8810ad58…) let anyone do.
var fingerprintKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	rand.Read(k) // never fails (crypto/rand)
	return k
})

// Fingerprint returns "<redacted:hmac:XXXXXXXXXXXX>" for a secret: 48
// bits of HMAC-SHA-256 under fingerprintKey, enough to tell a capture's
// few tokens apart. Exports replace it by a numbered label.
func Fingerprint(secret string) string {
	m := hmac.New(sha256.New, fingerprintKey())
	m.Write([]byte(secret))
	return "<redacted:hmac:" + hex.EncodeToString(m.Sum(nil)[:6]) + ">"
}
