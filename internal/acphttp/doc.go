// Package acphttp holds what acpscope's HTTP transports (the reverse
// proxy, connect and serve) share about ACP over Streamable HTTP and
// WebSocket: the Acp-* header names; how a frame is recorded, under which
// connection number (ConnTable) and with which of the exchange's headers
// (EnvelopeHeaders, credentials fingerprinted); how big a message may be
// and how to read one within that bound without a second copy (ReadBody,
// ReadMessage, BodyBuffer) and refuse one over it; and the client
// transports towards an agent's server. It knows nothing of how the
// transports route or forward messages, nor of the capture beyond the
// wire envelope.
//
// # Concurrency
//
// It starts no goroutines. A ConnTable is safe for concurrent use; a
// BodyBuffer belongs to one reader.
package acphttp
