// Package wire frames and classifies JSON-RPC 2.0 traffic as it appears on
// the wire: newline framing with no size limit, the SSE event codec
// (bounded when asked), and Classify, which tells what a frame is
// (request, notification, response, error response, batch, invalid JSON,
// non-protocol line, invalid UTF-8) and pulls out its id, method and
// sessionId without re-encoding anything.
// Pairer matches responses to requests by (direction, exact id bytes); it
// is the one pairing the store, lint, the transcript and replay share.
//
// wire knows JSON-RPC, not ACP: what a method means, which requests open
// a session and how a response is attributed to one are protocol's. The
// one ACP member it reads is params.sessionId, in the same pass as the
// rest, so that the capture path classifies each frame once. It knows
// nothing of storage, transports or the UI; every other package builds
// on it.
//
// # Concurrency
//
// Classify is a pure function and safe for concurrent use. Framer, Pairer
// and SSEDecoder hold state and belong to one goroutine each.
package wire
