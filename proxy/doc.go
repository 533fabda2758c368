// Package proxy forwards bytes between an editor and an agent, and hands
// a copy of what it forwards to a tap.Recorder (a *capture.Writer in the
// real program), which never blocks, so capture can never stall or alter
// the wire.
//
// The stdio proxy (Stdio) starts the agent through package agent,
// forwards the editor's stdin to it and its stdout to the editor byte for
// byte as the bytes arrive (one write per read, no framing, no size
// limit), passes its stderr through, forwards SIGINT, SIGTERM and SIGHUP
// to its whole process group, stops an agent that lingers with the
// ladder close stdin → SIGTERM → SIGKILL (after stdin EOF the first grace
// counts from the agent's last output, so one still writing is never cut
// off), and exits with the agent's status (128+N for signal N, 127 when
// it cannot be started). Each chunk is tapped just before it is written
// on, so an answer is never recorded before what it answers.
//
// The HTTP proxy (HTTPProxy) is a reverse proxy on one endpoint for ACP
// over Streamable HTTP (POST, SSE GET, DELETE; HTTP/1.1, cleartext
// HTTP/2, TLS) and WebSocket: bodies, events and messages pass unchanged
// and are recorded whole, each before the other side can see it. A
// WebSocket passes byte for byte, frames as they were sent (their
// masking keys, fragments and compression), the upgrade's key and
// extensions agreed by the two ends themselves (ws_upgrade.go,
// ws_relay.go). Under interception (--faults, --allow-intercept) each
// POST body, SSE event, JSON reply and WebSocket message goes to the
// interceptor instead, and what it delivers is sent on as a POST, SSE
// event or WebSocket message of its own; WebSockets are then relayed
// message by message (ws_proxy.go). Its
// listener and guard are package door's; what it shares with the bridges
// (envelope headers, bounds, upstream transports) is package acphttp's.
//
// It knows nothing of what the messages mean, how they are stored, or
// how a stdio peer is joined to an HTTP one (package bridge).
//
// # Concurrency
//
// Stdio owns three pump goroutines, one per stream (stdin→agent, agent
// stdout→stdout, agent stderr→stderr), each with its own reusable buffer
// and no lock shared with anything else, and at most one ladder
// goroutine; it returns after the agent has been reaped and its output
// drained. Pumps are stopped by closing the pipes we own or, for the
// editor's stdin, a read deadline when the reader supports one (pipes
// do). A pump that cannot be stopped (a blocking stdin, an editor that
// never reads our stdout) is muted, its stream's end is recorded for it,
// and it is left behind; that only matters to a caller that keeps running
// after Stdio, which the acpscope command does not.
//
// HTTPProxy runs each request on the goroutine net/http gives it; the
// response is written there and tapped before each write, and the
// request body is tapped on whichever goroutine the transport reads it
// from (bodyTap locks). An event stream is read there too, each read
// into a buffer of its own from which whole events are lent to the
// capture; the buffer is reused once the client has its bytes and the
// capture has given every event back (http_events.go). A WebSocket adds two goroutines, one per
// direction, that end when either side closes; each writes whole frames
// to its socket under that socket's lock, which a 1009 close the relay
// sends on its own also takes. A socket whose ends agreed on compression
// adds a third, which decodes and records its messages in the order they
// completed, so that decoding never costs the forwarding goroutines;
// what waits for it is bounded. Close closes the sockets.
// Under interception a Streamable HTTP connection's messages go to the
// interceptor one at a time per direction (httpConn's two locks), and
// each SSE stream is written only under its own lock, by its handler or
// by whichever goroutine delivers to it.
package proxy
