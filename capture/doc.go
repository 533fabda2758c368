// Package capture is acpscope's store: one bbolt file per capture (one
// proxy run), the batching Writer that the proxy's pumps hand frames to,
// the Reader and its queries, the filter language shared by the inspector
// and the CLI, the live feed a running proxy serves on a unix socket,
// JSONL and bug-report export and import, and redaction.
//
// # Concurrency
//
// Writer's tap methods (Chunk, Frame, EndStream) may be called from any
// goroutine and never block: they copy the bytes and enqueue them, or
// count them as lost when the bounded queue is full. One goroutine owned
// by the Writer frames, classifies and commits; Close stops it. A Reader
// is safe for concurrent use; Live delivers records on its own goroutine.
package capture
