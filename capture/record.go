package capture

import (
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// FormatVersion is the version of the on-disk layout this package writes.
const FormatVersion = 4

// Record is one captured frame, batch member or stderr line: the message
// every package reads (protocol.Msg) and what the store adds to it.
//
// In the Msg, Seq numbers records from 1 in the order they were received,
// dense and shared by every connection and direction of a capture; Conn
// is 0 for the single stdio connection; a paired response's Method and
// Session are those of the request it answers (protocol.ResponseSession);
// Body holds the exact bytes only when they were asked for.
type Record struct {
	protocol.Msg
	// ErrorCode is error.code of an error response (0 when none).
	ErrorCode int64
	// Size is the frame's length on the wire, without its newline.
	Size int64
	// Peer pairs a request with its response and back (0 when unpaired).
	Peer uint64
	// Latency is, on a response, the time since its request.
	Latency time.Duration

	// validJSON: Body is known to be one valid JSON value (the redactor
	// walked it and changed nothing), so AppendJSONL need not check it.
	validJSON bool
}

// When returns the receive time as a time.Time.
func (r *Record) When() time.Time { return time.Unix(0, r.Time) }

// Meta describes a whole capture.
type Meta struct {
	FormatVersion int       `json:"formatVersion"`
	ProxyVersion  string    `json:"proxyVersion"`
	Argv          []string  `json:"argv,omitempty"`
	Cwd           string    `json:"cwd,omitempty"`
	Agent         string    `json:"agent,omitempty"` // short agent name for listings
	Transport     string    `json:"transport"`       // "stdio", "http", "ws", "replay", "import"
	Upstream      string    `json:"upstream,omitempty"`
	Listen        string    `json:"listen,omitempty"`
	Pid           int       `json:"pid"`
	Start         time.Time `json:"start"`
	End           time.Time `json:"end,omitzero"` // zero while the capture is live
	Exit          *Exit     `json:"exit,omitempty"`
	Loss          Loss      `json:"loss"`
	// Backlog is how far capture fell behind the wire and caught up.
	Backlog Backlog `json:"backlog,omitzero"`
	// CommitEvery is the window the writer committed in: a capture cut
	// short by SIGKILL lacks at most this much of the end.
	CommitEvery time.Duration `json:"commitEvery,omitempty"`
	// Notes carries free-form facts (imported from, replayed from, …).
	Notes map[string]string `json:"notes,omitempty"`
}

// Exit is how the agent process ended.
type Exit struct {
	Code   int    `json:"code"`             // as the proxy exits: 128+N for signal N
	Signal string `json:"signal,omitempty"` // e.g. "SIGTERM"
	Error  string `json:"error,omitempty"`  // e.g. agent not found
}

// Loss counts what capture could not record. The proxy forwarded it all.
type Loss struct {
	Messages    int64  `json:"messages"`
	Bytes       int64  `json:"bytes"`
	Bursts      int64  `json:"bursts"`
	WriteErrors int64  `json:"writeErrors"`
	LastError   string `json:"lastError,omitempty"`
}

// Backlog is what waited on disk, in the writer's spool, while capture
// was behind the wire: recorded in the end, nothing lost, but recorded
// late (the live feed lagged), and what a SIGKILL would have taken.
type Backlog struct {
	Bytes int64 `json:"bytes"` // all that went through the spool
	Peak  int64 `json:"peak"`  // the most waiting at once
}

// Stream names a byte stream the proxy taps.
type Stream uint8

const (
	// StreamClient is what the client sent (the agent's stdin).
	StreamClient Stream = iota + 1
	// StreamAgent is what the agent sent (its stdout).
	StreamAgent
	// StreamStderr is the agent's standard error.
	StreamStderr
)

// Dir returns the direction of the stream's frames.
func (s Stream) Dir() wire.Dir {
	if s == StreamClient {
		return wire.DirClient
	}
	return wire.DirAgent
}
