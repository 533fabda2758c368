// Package proxy holds acpscope's transports. The stdio proxy spawns an
// agent, forwards the editor's stdin to the agent and the agent's stdout to
// the editor byte for byte as the bytes arrive, passes the agent's stderr
// through, forwards signals to the agent's process group and exits with the
// agent's status. Every chunk it forwards is handed afterwards to a
// Recorder (a *capture.Writer in the real program), which copies the bytes
// and never blocks, so capture can never stall or alter the wire.
//
// # Concurrency
//
// An Agent owns one goroutine (the reaper) that waits for the process and
// closes Done; Shutdown and Signal may be called from any goroutine.
// RunStdio owns three pump goroutines, one per stream (stdin→agent,
// agent stdout→stdout, agent stderr→stderr), each with its own reusable
// buffer and no lock shared with anything else; it returns only after the
// agent has been reaped and the output pumps have ended. The stdin pump is
// stopped through a read deadline when the editor's stdin supports one
// (pipes do); on a reader without deadlines it is left blocked in Read,
// which only matters to a caller that keeps running after RunStdio.
package proxy
