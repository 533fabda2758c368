package protocol

import (
	"bytes"
	"encoding/json"

	"github.com/acpscope/acpscope/wire"
)

// Proxy chains (RFD "Agent Extensions via ACP Proxies", a draft): a
// conductor sits between the client and a chain of proxies ending in the
// agent. It initializes each proxy with _proxy/initialize, and every
// message a proxy sends to its successor, or receives from it, travels
// between the proxy and the conductor inside a successor wrapper whose
// params are the inner message flattened: {method, params, _meta?}.
//
// The wrapper has no id of its own inside: whether the inner message is a
// request is told by the outer id, and the answer is a plain response to
// that id. So a wrapped request pairs with its response by the outer id,
// like any other, and the response takes the inner method and hop from
// the request it answers (Pair, and the store, do this).
//
// Each hop of wrapping turns the conversation around: on the wire between
// a conductor and a proxy, a message the conductor wraps comes from the
// proxy's successor (an agent, for the proxy), and a message the proxy
// wraps goes to it (the proxy acting as a client). Msg.From says who sent
// the inner message.

// successorMethods are the spellings of the successor wrapper: the
// reference conductor's older pair (request and notification), its newer
// single method, and the RFD text's spelling without the underscore.
var successorMethods = [...]string{
	"_proxy/successor/request", "_proxy/successor/notification", "_proxy/successor", "proxy/successor",
}

// maxHops bounds how many wrappers Unwrap peels: real chains nest a
// conductor or two, and a hostile message must not cost more than this.
const maxHops = 16

// IsSuccessor reports whether method is a proxy-chain successor wrapper,
// in any of its spellings.
func IsSuccessor(method string) bool {
	if len(method) < len("proxy/successor") {
		return false
	}
	for _, s := range successorMethods {
		if method == s {
			return true
		}
	}
	return false
}

// IsProxyInitialize reports whether method initializes a proxy component
// (_proxy/initialize, or the RFD text's proxy/initialize): same params and
// result as initialize, and it tells the component it has a successor.
func IsProxyInitialize(method string) bool {
	return method == "_proxy/initialize" || method == "proxy/initialize"
}

// IsInitialize reports whether method opens a connection's lifecycle:
// initialize, or the proxy-chain initialize a conductor sends a proxy.
func IsInitialize(method string) bool {
	return method == "initialize" || IsProxyInitialize(method)
}

// Inner is the message a proxy-chain wrapper carries, or a message that
// is not wrapped as it is (Hop 0).
type Inner struct {
	// Method is the inner method; for a response, the method of the
	// request it answers when the message knows it (Msg.Method).
	Method string
	// ID is the inner message's id: the outer one, since the wrapper's
	// params carry none (nil for a notification).
	ID []byte
	// Session is the inner params.sessionId ("" when none).
	Session string
	// Params are the exact bytes of the inner params, nil when absent.
	Params []byte
	// Hop counts the wrappers peeled: 0 for a message that is not
	// wrapped, 2 for a wrapper inside a wrapper.
	Hop int
	// Wrapper is the outermost wrapper's method ("" when Hop is 0).
	Wrapper string
	// Meta is the outermost wrapper's _meta (or the RFD's meta), nil
	// when absent.
	Meta []byte
}

// Unwrap returns the message m carries: for a proxy-chain wrapper, the
// innermost message (its method, id, session and params) and how many
// wrappers held it; for any other message, m itself at hop 0. A response
// carries no method, so its Inner comes from m's metadata (the store and
// Pair give a paired response its request's method, session and hop).
// A wrapper whose params lack a string method is not peeled further: it
// stays the message, as a viewer must show what it cannot read.
func Unwrap(m *Msg) Inner {
	in := Inner{Method: m.Method, ID: m.ID, Session: m.Session, Hop: int(m.Hop)}
	b := bytes.TrimSpace(m.Body)
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return in
	}
	method := wire.StringMember(b, "method")
	if method == "" {
		return in // a response, or not a message
	}
	params := wire.Value(b, "params")
	in = Inner{Method: method, ID: m.ID, Params: params}
	for IsSuccessor(method) && in.Hop < maxHops && isObject(params) {
		inner := wire.StringMember(params, "method")
		if inner == "" {
			break
		}
		if in.Hop == 0 {
			in.Wrapper, in.Meta = method, wrapperMeta(params)
		}
		method, params = inner, wire.Value(params, "params")
		in.Hop++
	}
	in.Method, in.Params = method, params
	if isObject(params) {
		in.Session = wire.StringMember(params, "sessionId")
	}
	return in
}

// wrapperMeta returns a wrapper's metadata: _meta as the conductor writes
// it, or meta as the RFD's example does.
func wrapperMeta(params []byte) []byte {
	if m := wire.Value(params, "_meta"); m != nil {
		return m
	}
	return wire.Value(params, "meta")
}

// isObject reports whether raw (exact JSON bytes) is an object.
func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// Resolve gives m the method, session and hop of the message it carries
// when it is a proxy-chain wrapper, so that everything reading Msg sees
// the inner message; its Body keeps the exact bytes. Messages that are
// not wrappers are left alone. FromLine and the store call it.
func Resolve(m *Msg) {
	if !IsSuccessor(m.Method) {
		return
	}
	in := Unwrap(m)
	if in.Hop == 0 {
		return
	}
	m.Method, m.Session, m.Hop = in.Method, in.Session, uint8(min(in.Hop, 255))
}

// From returns who sent the message m carries: m.Dir for a message that
// is not wrapped, the other side for each hop of wrapping (on the wire
// between a conductor and a proxy, what the conductor wraps comes from the
// proxy's successor, the agent side, and what the proxy wraps is the
// proxy speaking as a client).
func (m *Msg) From() wire.Dir {
	if m.Hop%2 == 1 {
		return m.Dir.Reverse()
	}
	return m.Dir
}

// HopLabel is how a table shows a message's hop: "" at hop 0, else
// "↪ hop N".
func HopLabel(hop uint8) string {
	if hop == 0 {
		return ""
	}
	return "↪ hop " + uitoa(uint64(hop))
}
