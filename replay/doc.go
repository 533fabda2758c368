// Package replay re-drives captures. As a client it spawns an agent, sends
// the recorded client→agent messages in causal order, answers the agent's
// own requests from the recording and compares what comes back with what
// was recorded; as an agent it serves a recording to a real client. Both
// rebind identifiers the live peer mints (sessionId, terminalId,
// toolCallId, …) by learning them at the recorded JSON paths. The same
// alignment and field-level diff compare two captures (acpscope diff), and
// a sequence diagram renders a conversation for bug reports.
//
// Replay works on protocol.Msg, the message every package shares: Load
// takes recorded messages as the store classified and paired them, live
// ones are classified as they arrive, and protocol.Pair says which
// message answers which. What messages mean (session/update variants,
// which requests open a session) it asks protocol; it knows nothing of
// the UI.
//
// # Concurrency
//
// A replay run owns two goroutines: a reader of the peer's output that
// hands each line to the driver through a channel, and the driver itself,
// which alone touches the run's state (binder, cursor, report). Both stop
// when the context is cancelled or the peer's output ends. Align, Compare,
// Mermaid and Binder are plain functions and values for one goroutine.
package replay
