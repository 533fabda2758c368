// Package protocol knows what Agent Client Protocol traffic means, and is
// the one place that knows it: the method catalog (who sends what,
// request or notification, session-scoped or not, how stable), which
// requests open a session and how a response is attributed to one, the
// session/update variants and the shapes they carry, the messages proxy
// chains carry inside _proxy/successor wrappers (Unwrap) and the MCP
// messages MCP-over-ACP carries (DecodeMCP), request/response pairing
// over a conversation, the transcript a viewer rebuilds from a
// session's messages, the pre-alpha Agent Communication Protocol
// (agents/list, agents/run and the progress-delta merge algorithm), and
// the lint rules that say what is wrong with a capture (JSON-RPC 2.0,
// stdio, batches, ACP lifecycle, the Streamable HTTP draft).
//
// Msg is acpscope's one message type: the store's records embed it, and
// lint, the transcript, replay and the viewers all read it. protocol
// builds on wire's framing and classification and knows nothing of
// storage, transports or the UI.
//
// # Concurrency
//
// Everything here is a pure function of its input or a read-only table;
// all of it is safe for concurrent use. A SchemaValidator may be shared.
package protocol
