package protocol

import (
	"bytes"
	"encoding/json"

	"github.com/acpscope/acpscope/wire"
)

// Msg is one frame, batch member or stderr line: acpscope's one message
// type. The store's capture.Record embeds it and adds what the store
// learns (pairing, latency, sizes); lint, the transcript and replay read
// it as it is.
type Msg struct {
	Seq   uint64
	Time  int64 // unix nanoseconds
	Dir   wire.Dir
	Kind  wire.Kind
	Flags wire.Flags
	// ID holds the exact bytes of the JSON-RPC id, nil when absent.
	ID []byte
	// Method of a request or notification (a capture may also set it on
	// responses, to the method they answer; protocol pairs on its own).
	// For a proxy-chain wrapper it is the method of the message inside
	// (Resolve), and Hop says how deep.
	Method  string
	Session string
	// Hop counts the proxy-chain wrappers around the message (0: none);
	// a response has the hop of the request it answers.
	Hop uint8
	// Parent is the batch a batch member belongs to (0 for none).
	Parent uint64
	// Conn numbers the transport connection within the capture; JSON-RPC
	// ids and the ACP lifecycle are per connection.
	Conn uint32
	// Body holds the exact bytes of the frame, without its newline.
	Body []byte
	// HTTP is the envelope of frames that travelled over HTTP/WebSocket.
	HTTP *wire.Envelope
	// Fault is set when acpscope dropped, changed, delayed, held or made
	// up the message rather than forward it as it arrived.
	Fault *Fault
}

// FromLine builds a Msg from one wire line, classifying it. It is the
// convenience tests and importers use; captured records already carry
// their kind.
func FromLine(seq uint64, dir wire.Dir, line []byte) Msg {
	c := wire.Classify(line)
	m := Msg{Seq: seq, Dir: dir, Kind: c.Kind, Flags: c.Flags, ID: c.ID, Method: c.Method, Session: c.SessionID, Body: line}
	Resolve(&m)
	return m
}

// member returns the exact bytes of key in the body's top-level object.
func (m *Msg) member(key string) []byte {
	b := bytes.TrimSpace(m.Body)
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return nil
	}
	return wire.Value(b, key)
}

// params returns the exact bytes of "params", nil when absent; for a
// proxy-chain wrapper, those of the message inside.
func (m *Msg) params() []byte {
	p := m.member("params")
	if p == nil || !IsSuccessor(wire.StringMember(bytes.TrimSpace(m.Body), "method")) {
		return p
	}
	return Unwrap(m).Params
}

// decode unmarshals raw JSON into v with numbers kept as json.Number. It
// reports whether raw held a value that decoded.
func decode(raw []byte, v any) bool {
	if len(raw) == 0 {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v) == nil
}

// object decodes raw as a JSON object; nil when it is not one.
func object(raw []byte) map[string]any {
	var m map[string]any
	if !decode(raw, &m) {
		return nil
	}
	return m
}

// str returns m[key] when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// obj returns m[key] when it is an object.
func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// arr returns m[key] when it is an array.
func arr(m map[string]any, key string) []any {
	a, _ := m[key].([]any)
	return a
}

// isTrue reports whether m[key] is the boolean true.
func isTrue(m map[string]any, key string) bool {
	b, _ := m[key].(bool)
	return b
}

// idKey is the exact id bytes as a map key; "" for none.
func idKey(id []byte) string { return string(bytes.TrimSpace(id)) }
