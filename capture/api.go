package capture

// This file pins the package's API so that the proxy, inspector, replay
// and main can be written against it. Bodies that panic are filled in by
// the store's implementation files.

import (
	"time"

	"github.com/acpscope/acpscope/protocol"
)

// DefaultQueueBytes is the hand-off queue's default bound: a burst of
// traffic up to this size is recorded whole however slow the disk is for
// a moment, so only a longer burst shows whether capture keeps up. Past
// 16 MiB queued, large chunks and frames are taken only into recycled
// buffers (see freshQueueBytes): until those are warm, a burst is
// recorded whole up to about 16 MiB, unless the builder moves the queue
// to its spool first (see spool).
const DefaultQueueBytes = 64 << 20

// DefaultCommitEvery is how long records may wait for their commit when
// WriterOptions.CommitEvery is not set, and so the most of a capture a
// SIGKILL can take. Each commit costs kernel time (two fsyncs and the
// writes before them: 2-4 ms per commit of ~500 records, measured with
// per-thread rusage on a paravirtualised guest whose kernel does not
// preempt), and a round trip that needs the CPU meanwhile waits: in
// acpscope bench there, round trips slower than 1 ms came 5-7 times as
// often as through the minimal forwarder at this default, and about 3
// times as often at 200 ms. MinCommitEvery and MaxCommitEvery bound what
// a user may choose instead.
const (
	DefaultCommitEvery = 50 * time.Millisecond
	MinCommitEvery     = 5 * time.Millisecond
	MaxCommitEvery     = 10 * time.Second
)

// DefaultCommitBytes bounds a group commit's bodies. A group's bodies sit
// in the builder's arenas (8 MiB of them are kept for reuse), and bbolt
// copies them once more into page buffers it allocates per commit: both
// are memory the kernel faults in afresh when groups are large. With
// 16 MiB groups, 20,000 messages of 16 KiB cost the writer 75-79k page
// faults; with 4 MiB, 43-44k and 14-22% less CPU
// (BenchmarkWriterFrame16KiB). 2 MiB gained nothing more, and 200 B lines
// fill a group by count first.
const DefaultCommitBytes = 4 << 20

// WriterOptions configure a Writer. Zero values take the defaults.
type WriterOptions struct {
	Meta Meta // initial metadata; Start, Pid, FormatVersion filled in if zero
	// QueueBytes and QueueChunks bound the hand-off queue from the
	// pumps (defaults DefaultQueueBytes and 65536 chunks).
	QueueBytes  int64
	QueueChunks int
	// CommitEvery, CommitRecords and CommitBytes bound a group commit
	// (defaults DefaultCommitEvery, 10 000 records, DefaultCommitBytes).
	CommitEvery   time.Duration
	CommitRecords int
	CommitBytes   int64
	// NoSync turns fsync off (tests and benchmarks of other parts only).
	NoSync bool
	// NoFeed disables the live feed socket.
	NoFeed bool
	// Warn receives one line per loss burst or write failure, and a
	// summary at Close if anything was lost; the lines carry no program
	// prefix, the caller adds its own. Nil discards.
	Warn func(msg string)
	// SpoolBytes bounds how much the builder may put on disk beside the
	// capture while it is behind the wire (default DefaultSpoolBytes,
	// negative: none, so a slow capture drops sooner).
	SpoolBytes int64
	// CommitDelay slows every commit down (tests of overflow accounting).
	CommitDelay time.Duration

	// maxFileSize makes writes fail past this size (tests of disk full).
	maxFileSize int
	// releaseMapped drops the pages of the file's memory map after every
	// commit: an import or export touches a little of the file with each
	// and would otherwise end up holding much of it resident.
	releaseMapped bool
	// noWire marks a writer with no forwarding beside it (export,
	// import): its builder and committer keep full priority, and the
	// process its processors, since nothing waits on them but the copy.
	noWire bool
	// commitGate, when set, holds every commit until it can receive from
	// it (tests of a stalled disk: close it to let the writer finish).
	commitGate <-chan struct{}
}

// Stats are the writer's running counters.
type Stats struct {
	Records   uint64 // records framed so far (batch members and stderr lines included)
	Committed uint64 // records durably written (fsync'ed unless NoSync)
	Loss      Loss   // what could not be recorded; Meta().Loss stores it
	Queued    int64  // bytes waiting in the queue now
	Backlog   Backlog
}

// Source is what viewers read records from: a finished capture file
// (*Reader) or a running proxy's live feed (*Live).
type Source interface {
	Meta() Meta
	// Last returns the highest sequence number available now (0 if none).
	Last() uint64
	// Record returns the metadata of one record, without its body.
	Record(seq uint64) (Record, error)
	// Body returns a copy of the record's exact bytes.
	Body(seq uint64) ([]byte, error)
	// Scan calls fn with each record from seq on, in order, without
	// bodies, until fn returns false or the records end.
	Scan(from uint64, fn func(*Record) bool) error
	// Findings returns the stored lint findings: nil when the capture
	// was never linted, empty when lint found nothing.
	Findings() ([]protocol.Finding, error)
	Close() error
}

// Index names a lookup the store keeps.
type Index uint8

// The indexes. IDClient and IDAgent hold the request ids each side sent,
// and the responses that answer them.
const (
	IndexMethod Index = iota + 1
	IndexSession
	IndexIDClient
	IndexIDAgent
)
