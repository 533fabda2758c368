// Package agent starts and stops agent processes: Start runs the agent's
// command without a shell in a process group of its own, with pipes to
// its stdin, stdout and stderr (on Linux the kernel sends it SIGTERM if
// we die without stopping it); signals are forwarded to its whole group;
// its exit is awaited on a pidfd where the kernel has one, so a waiting
// agent holds no OS thread; and Shutdown stops it with the ladder close
// stdin → wait → SIGTERM → wait → SIGKILL, each wait Options.Grace.
// ExitStatus says how it ended, as a shell would (128+N for signal N,
// 127 when it could not be started, with a StartError that says what to
// check). The stdio proxy, serve (one agent per connection) and replay
// all start their agents here. It knows nothing of what the agent says:
// its pipes are the caller's to read and write.
//
// # Concurrency
//
// A Process owns one goroutine, the reaper, which waits for the process,
// records its ExitStatus and closes Done; when Start's context can end,
// a second one stops the agent through the ladder if it does, and ends
// when either happens. Every method may be called from any goroutine,
// concurrently and more than once: Shutdown, Escalate and Terminate each
// return as soon as the agent has exited, and CloseStdin is idempotent.
package agent
