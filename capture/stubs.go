package capture

// Placeholders replaced by the store implementation.

import (
	"time"

	"github.com/acpscope/acpscope/wire"
)

// Writer records one capture. See the package doc for its concurrency.
type Writer struct{ path string }

// Create makes a new capture file at path (0600, its directory 0700) and
// starts the writer goroutine and, unless opts.NoFeed, the live feed.
func Create(path string, opts WriterOptions) (*Writer, error) { panic("unimplemented") }

// Path returns the capture file's path.
func (w *Writer) Path() string { return w.path }

// Chunk hands over bytes read from a stream at time t (unix ns). It copies
// b, never blocks, and counts the bytes as lost if the queue is full.
func (w *Writer) Chunk(conn uint32, s Stream, t int64, b []byte) { panic("unimplemented") }

// EndStream marks the end of a stream; a final partial line is recorded
// with wire.FlagPartial.
func (w *Writer) EndStream(conn uint32, s Stream, t int64) { panic("unimplemented") }

// Frame hands over one whole message (an HTTP body, an SSE event's data,
// a WebSocket message) with its envelope. It copies b and never blocks.
func (w *Writer) Frame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	panic("unimplemented")
}

// UpdateMeta changes the capture's metadata; it is stored with the next
// commit.
func (w *Writer) UpdateMeta(fn func(*Meta)) { panic("unimplemented") }

// Stats returns the running counters.
func (w *Writer) Stats() Stats { panic("unimplemented") }

// Close drains the queue, commits, stores the end time and closes the
// file and the live feed. It is idempotent.
func (w *Writer) Close() error { panic("unimplemented") }

// Reader reads a finished capture file. It is safe for concurrent use.
type Reader struct{}

// Open opens a capture read-only. It returns an error wrapping ErrLive
// when a running proxy holds the file, ErrCorrupt or ErrNotCapture when
// the file cannot be read as a capture.
func Open(path string) (*Reader, error) { panic("unimplemented") }

// Lookup returns, in order, the sequence numbers an index holds for term
// (a method, a sessionId, or the exact bytes of an id).
func (r *Reader) Lookup(ix Index, term string) ([]uint64, error) { panic("unimplemented") }

// Live reads a running proxy's capture through its feed. Records arrive in
// the background; Updates signals when more are available.
type Live struct{}

// DialLive connects to the feed of the capture at path, asking for every
// record from seq from on.
func DialLive(path string, from uint64) (*Live, error) { panic("unimplemented") }

// Updates returns a channel that receives a value whenever new records
// arrive, and is closed when the proxy finishes or the feed is cut.
func (l *Live) Updates() <-chan struct{} { panic("unimplemented") }

// Err reports why the feed ended, nil while it runs or after a clean end.
func (l *Live) Err() error { panic("unimplemented") }

// OpenSource opens a capture for viewing: directly when finished, through
// its feed when a proxy is writing it.
func OpenSource(path string) (Source, error) { panic("unimplemented") }

// Info is one capture in a listing.
type Info struct {
	Path     string
	Meta     Meta
	Live     bool
	Size     int64
	Messages uint64
	Findings int
	Err      error // set when the file could not be read; listed anyway
}

// List returns the captures in dir, newest first, reading no payloads.
func List(dir string) ([]Info, error) { panic("unimplemented") }

// DefaultDir returns the capture directory: $ACPSCOPE_DIR, else
// ${XDG_STATE_HOME:-~/.local/state}/acpscope/captures.
func DefaultDir() (string, error) { panic("unimplemented") }

// NewName returns a capture file name for an agent started now:
// UTC start time, agent name and pid.
func NewName(agent string, start time.Time, pid int) string { panic("unimplemented") }

// Resolve turns what a user typed (a path, a file name in the capture
// directory, a unique prefix, or "latest") into a capture path.
func Resolve(dir, name string) (string, error) { panic("unimplemented") }

// SaveFindings replaces the lint findings stored with a finished capture.
func SaveFindings(path string, fs []Finding) error { panic("unimplemented") }

func (r *Reader) Meta() Meta                                    { panic("unimplemented") }
func (r *Reader) Last() uint64                                  { panic("unimplemented") }
func (r *Reader) Record(seq uint64) (Record, error)             { panic("unimplemented") }
func (r *Reader) Body(seq uint64) ([]byte, error)               { panic("unimplemented") }
func (r *Reader) Scan(from uint64, fn func(*Record) bool) error { panic("unimplemented") }
func (r *Reader) Findings() ([]Finding, error)                  { panic("unimplemented") }
func (r *Reader) Close() error                                  { panic("unimplemented") }

func (l *Live) Meta() Meta                                    { panic("unimplemented") }
func (l *Live) Last() uint64                                  { panic("unimplemented") }
func (l *Live) Record(seq uint64) (Record, error)             { panic("unimplemented") }
func (l *Live) Body(seq uint64) ([]byte, error)               { panic("unimplemented") }
func (l *Live) Scan(from uint64, fn func(*Record) bool) error { panic("unimplemented") }
func (l *Live) Findings() ([]Finding, error)                  { panic("unimplemented") }
func (l *Live) Close() error                                  { panic("unimplemented") }

var (
	_ Source = (*Reader)(nil)
	_ Source = (*Live)(nil)
)
