// Package har writes a capture recorded over HTTP (acpscope proxy, serve
// or connect) as an HTTP Archive (HAR 1.2), the file a browser's
// developer tools open in their network panel: each POST with its body
// and its answer (a JSON reply, an SSE stream, or a status alone), each
// GET stream with its events, each DELETE, and each WebSocket with its
// messages in Chrome's _webSocketMessages extension, all with their
// headers, status and timings.
//
// A capture keeps messages, not HTTP exchanges, so the exchanges are put
// back together: a reply or an SSE stream belongs to the POST its
// JSON-RPC response answers, events before that response to the open
// POST stream of the same session, a bare status to the oldest POST on
// its connection still waiting for one, and GET streams and WebSockets
// to their connection. Headers come from the envelopes the proxy kept,
// credentials redacted by capture's Exporter as in every export.
//
// # Concurrency
//
// Export runs on its caller's goroutine; capture's Exporter, which it
// drives, owns the goroutines that read and redact.
package har
