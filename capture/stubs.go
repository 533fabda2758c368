package capture

// Placeholders replaced by the store implementation.

import (
	"time"
)

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
