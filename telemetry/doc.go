// Package telemetry turns ACP traffic into OpenTelemetry traces and ships
// them over OTLP (HTTP or gRPC, with the official Go SDK's exporters) or
// to an OTLP JSON file. One Builder makes spans from a sequence of capture
// records, whether a running capture's watcher feeds it (Watch) or a
// finished capture is read back (Export), so both give the same spans
// with the same ids: one trace per prompt turn, rooted at its
// session/prompt span (or placed in the trace its _meta.traceparent
// names), with a child span for every request made during the turn and
// for every tool call from tool_call to its final status; requests outside
// a turn are traces of their own, and each connection has a span that
// collects what belongs to no request. Every attribute and event passes
// through capture's redaction; bodies are attached only when asked for.
//
// telemetry sits above capture (it reads records and redacts with its
// rules) and below the command line; it knows nothing of transports.
//
// # Concurrency
//
// A Builder is fed by one goroutine: the capture writer's watcher
// goroutine for a live run, the caller's for Export. It never blocks on
// the network: ended spans go to the SDK's batch span processor, whose
// bounded queue drops what does not fit, and whose own goroutine exports
// batches. Pipeline.Shutdown, called once the records end, waits at most
// Config.FlushTimeout for the last batches and then stops the exporter,
// which cancels an export still under way, so the processor's goroutine
// ends too. Pipeline counters are atomic.
package telemetry
