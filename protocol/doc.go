// Package protocol knows what Agent Client Protocol traffic means: the
// method catalog (who sends what, request or notification, session-scoped
// or not, how stable), the session/update variants and the shapes they
// carry, the transcript a viewer rebuilds from a session's messages, the
// pre-alpha Agent Communication Protocol (agents/list, agents/run and the
// progress-delta merge algorithm), and the lint rules that say what is
// wrong with a capture (JSON-RPC 2.0, stdio, batches, ACP lifecycle, the
// Streamable HTTP draft).
//
// protocol works on Msg values, its own copy of a captured frame, so that
// it depends on wire alone and knows nothing of storage or the UI.
//
// # Concurrency
//
// Everything here is a pure function of its input or a read-only table;
// all of it is safe for concurrent use. A SchemaValidator may be shared.
package protocol
