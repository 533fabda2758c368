// Package bench is `acpscope bench`: it measures, in one run, what
// putting something between a client and an agent costs, for (a) the
// agent driven directly, (b) a minimal forwarding process it builds with
// the go command, (c) a tee pipeline that logs each message with a
// timestamp, (d) acpscope's stdio proxy with capture, (e) without, (f)
// the forwarder also writing all it forwards to a synced file (what
// recording the bytes costs a plain forwarder, built from floor/ as the
// forwarder is built), and any other proxies given (Config.Peers):
// round-trip latency run by run,
// messages and megabytes per second, CPU seconds per million messages
// (rusage of each setup's process tree), huge lines echoed, peak RSS on
// one huge line, capture loss, the capture directory's synced write
// rate, and paced runs at target rates. Report.Print
// writes the table with ratios against the forwarder. It drives commands
// it is given (Config.Agent, Config.Proxy) and knows nothing of how
// acpscope forwards or records; it reads a finished capture, and what
// (f) wrote, only for their loss counts.
//
// # Concurrency
//
// Run drives the pipelines from the caller's goroutine, one at a time
// except in the round-trip and echo phases, which keep every setup's
// pipeline open and time them in turns; an echo's writer is a goroutine
// of its own, waited for before the echo returns. Each running pipeline has one RSS poller
// goroutine (and os/exec's copier of its stderr), which ends when the
// pipeline is finished; cancelling Run's context kills the processes.
package bench
