// Package proxy holds acpscope's transports. The stdio proxy spawns an
// agent in its own process group, forwards the editor's stdin to the
// agent and the agent's stdout to the editor byte for byte as the bytes
// arrive (one write per read, no framing, no size limit), passes the
// agent's stderr through, forwards SIGINT, SIGTERM and SIGHUP to the
// agent's whole group, stops an agent that lingers with the ladder close
// stdin → SIGTERM → SIGKILL (after stdin EOF the first grace counts from
// the agent's last output, so one still writing is never cut off), and
// exits with the agent's status (128+N for signal N, 127 when it cannot
// be started). Every chunk it forwards is
// handed afterwards to a tap.Recorder (a *capture.Writer in the real program),
// which copies the bytes and never blocks, so capture can never stall or
// alter the wire. On Linux the agent also gets SIGTERM from the kernel if
// the proxy itself dies without stopping it.
//
// # Concurrency
//
// An Agent owns one goroutine (the reaper) that waits for the process and
// closes Done; Shutdown, Escalate and Signal may be called from any
// goroutine; Terminate too. RunStdio owns three pump goroutines, one per stream
// (stdin→agent, agent stdout→stdout, agent stderr→stderr), each with its
// own reusable buffer and no lock shared with anything else, and at most
// one ladder goroutine; it returns after the agent has been reaped and its
// output drained. Pumps are stopped by closing the pipes we own or, for
// the editor's stdin, a read deadline when the reader supports one (pipes
// do). A pump that cannot be stopped (a blocking stdin, an editor that
// never reads our stdout) is muted, its stream's end is recorded for it,
// and it is left behind; that only matters to a caller that keeps running
// after RunStdio, which the acpscope command does not.
package proxy
