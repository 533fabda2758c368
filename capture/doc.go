// Package capture is acpscope's store: one bbolt file per capture (one
// proxy run), the batching Writer that the proxy's pumps hand frames to,
// the Reader and its queries, the filter language shared by the inspector
// and the CLI, the live feed a running proxy serves on a unix socket,
// Follow, which reads a capture on as its proxy writes it, JSONL and
// bug-report export and import, redaction, and the retention policy gc
// applies.
//
// A Record is a protocol.Msg, the message type every package shares, with
// what the store learns beside it (pairing, latency, size, error code).
// capture asks protocol what messages mean (which requests open a
// session, where MCP server secrets sit, session/update variants) and
// wire how frames split; it knows nothing of transports or the UI.
//
// Records are stored in segments (runs of up to 256 consecutive records
// or 256 KiB of bodies) so that a bbolt Put costs per segment, not per
// message; layout.go describes the buckets, segment.go the encoding and
// jsonl.go the JSONL line format.
//
// # Concurrency
//
// Writer's tap methods (Chunk, Frame, EndStream) may be called from any
// goroutine and never block: they copy the bytes and enqueue them, or
// count them as lost when the bounded queue is full. Behind the queue a
// Writer owns two goroutines: the builder frames, classifies, pairs and
// packs records into groups, and the committer writes each group in one
// transaction with fsync; a channel holding one group joins them, so the
// next group is parsed while the last one syncs. On Linux both run on
// threads of their own at a lower priority (runInBackground), so the
// kernel serves forwarding first. Close stops the builder,
// which hands over a final group and closes the channel; the committer
// then ends. With the live feed on, an accept goroutine and one goroutine
// per subscriber read committed records from the file; Close lets them
// finish (or cuts them off after a grace period) before closing the file.
// Each Watcher (an in-process subscriber, such as the span builder) has a
// goroutine of its own that reads committed records back from the file,
// like a feed subscriber; Close lets it read to the end (cutting it off
// after WatchCloseWait), waits for its Finish and stores its notes.
//
// An Exporter's Each runs three stages at once: a reader and a redactor
// goroutine it owns and the caller's; Each returns once both of its own
// have ended, after the last record or the caller's error. The Redactor
// scans a text of 8 MiB or more on two goroutines, the second ending
// before the scan returns. Imports and exports hand records to a Writer
// through put, which, unlike the tap, waits for room.
//
// A Reader is safe for concurrent use. Live owns one goroutine reading
// its socket until the feed ends or Close. Follow runs on its caller's
// goroutine and starts none of its own beyond the Live it dials.
package capture
