// Package bridge joins a stdio peer to an HTTP or WebSocket one, message
// by message, where package proxy forwards bytes between two peers that
// speak the same transport.
//
// Connect lets a stdio-only editor use a remote agent: each line on its
// stdin goes to the server through a link (Streamable HTTP: a POST per
// message, SSE streams per connection and session, their events put back
// in the agent's order; or one WebSocket), each server message becomes
// one line on its stdout. It never reconnects: the conversation lives on
// the server.
//
// Server (acpscope serve) exposes a stdio agent as a remote one, per the
// draft RFD: one agent process per connection, started through package
// agent; POST bodies become lines on its stdin; its stdout lines are
// routed to the connection's SSE stream, a session's, or initialize's
// reply (or its WebSocket), in the agent's order across streams.
//
// Both record what they carry through one tap.Recorder, listen and guard
// through package door, and share ACP-over-HTTP facts with the proxy
// through package acphttp. It knows nothing of how captures are stored
// or shown.
//
// # Concurrency
//
// Connect owns a stdin pump goroutine that sends each editor message
// through the link, and the link's readers: over HTTP one goroutine per
// open SSE stream and a gap timer that gives up on a missing event, over
// WebSocket one reader. They hand messages to one writer of stdout under
// a lock. Connect returns once stdin ended (then it closes the connection
// politely), the server was lost, or its context ended; it waits a
// bounded time for the readers.
//
// Server's goroutines are listed on the type: per connection a stdout
// reader, a stderr reader, an exit watcher, timers, and at teardown a
// ladder goroutine that Close waits for; each open stream is written by
// its own request's goroutine.
package bridge
