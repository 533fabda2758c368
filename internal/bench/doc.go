// Package bench is `acpscope bench`: it measures, in one run, what
// putting something between a client and an agent costs, for (a) the
// agent driven directly, (b) a minimal forwarding process it builds with
// the go command, (c) a tee pipeline that logs each message with a
// timestamp, (d) acpscope's stdio proxy with capture and (e) without:
// round-trip latency, messages and megabytes per second, peak RSS on one
// huge line, capture loss, and paced runs at target rates. Report.Print
// writes the table with ratios against the forwarder. It drives commands
// it is given (Config.Agent, Config.Proxy) and knows nothing of how
// acpscope forwards or records; it reads a finished capture only for its
// loss count.
//
// # Concurrency
//
// Run drives the pipelines from the caller's goroutine, one at a time
// except in the round-trip phase, which keeps every setup's pipeline open
// and times them in turns. Each running pipeline has one RSS poller
// goroutine (and os/exec's copier of its stderr), which ends when the
// pipeline is finished; cancelling Run's context kills the processes.
package bench
