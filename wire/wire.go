package wire

// Dir is the direction of a frame, named by its sender.
type Dir uint8

const (
	// DirClient marks frames the client (editor) sent to the agent.
	DirClient Dir = 1
	// DirAgent marks frames the agent sent to the client, and its stderr.
	DirAgent Dir = 2
)

// String returns "client" or "agent": the sender.
func (d Dir) String() string {
	switch d {
	case DirClient:
		return "client"
	case DirAgent:
		return "agent"
	}
	return "unknown"
}

// Arrow returns a one-character picture of the direction for tables.
func (d Dir) Arrow() string {
	if d == DirAgent {
		return "←"
	}
	return "→"
}

// Reverse returns the other direction: the one a response travels in.
func (d Dir) Reverse() Dir {
	if d == DirAgent {
		return DirClient
	}
	return DirAgent
}

// Kind tells what a frame is.
type Kind uint8

// The kinds of frame. KindStderr is never returned by Classify: it marks a
// line the agent wrote to its standard error, recorded beside the protocol.
const (
	KindUnknown Kind = iota
	KindRequest
	KindNotification
	KindResponse
	KindError
	KindBatch
	KindInvalidJSON
	KindNonProtocol
	KindInvalidUTF8
	KindStderr
)

var kindNames = [...]string{
	KindUnknown:      "unknown",
	KindRequest:      "request",
	KindNotification: "notification",
	KindResponse:     "response",
	KindError:        "error",
	KindBatch:        "batch",
	KindInvalidJSON:  "invalid-json",
	KindNonProtocol:  "non-protocol",
	KindInvalidUTF8:  "invalid-utf8",
	KindStderr:       "stderr",
}

// String returns the kind's name as the filter language and JSONL use it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, bool) {
	for k, name := range kindNames {
		if name == s {
			return Kind(k), true
		}
	}
	return KindUnknown, false
}

// IsProtocol reports whether frames of this kind are JSON-RPC messages.
func (k Kind) IsProtocol() bool {
	return k >= KindRequest && k <= KindBatch
}

// IsResponse reports whether frames of this kind answer a request: a
// result or an error.
func (k Kind) IsResponse() bool {
	return k == KindResponse || k == KindError
}

// Flags mark facts about a frame that are not its kind.
type Flags uint16

const (
	// FlagPartial: the stream ended before this frame's newline.
	FlagPartial Flags = 1 << iota
	// FlagCRLF: the line ended in "\r\n"; the "\r" is kept in the bytes.
	FlagCRLF
	// FlagBatchMember: the frame is one element of a batch array; its
	// bytes are a slice of the batch's line, which alone was on the wire.
	FlagBatchMember
	// FlagTruncated: capture lost some of this frame's bytes (overflow);
	// what is stored is not what was forwarded.
	FlagTruncated
	// FlagBinary: a WebSocket binary frame.
	FlagBinary
	// FlagBadVersion: "jsonrpc" is missing or not "2.0".
	FlagBadVersion
	// FlagEmpty: an empty or all-whitespace line.
	FlagEmpty
	// FlagAfterExit: written by the agent after its exit was observed.
	FlagAfterExit
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagPartial, "partial"},
	{FlagCRLF, "crlf"},
	{FlagBatchMember, "batch-member"},
	{FlagTruncated, "truncated"},
	{FlagBinary, "binary"},
	{FlagBadVersion, "bad-version"},
	{FlagEmpty, "empty"},
	{FlagAfterExit, "after-exit"},
}

// Names lists the set flags by name, in a fixed order.
func (f Flags) Names() []string {
	var out []string
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			out = append(out, fn.name)
		}
	}
	return out
}

// ParseFlag returns the flag with the given name.
func ParseFlag(name string) (Flags, bool) {
	for _, fn := range flagNames {
		if fn.name == name {
			return fn.f, true
		}
	}
	return 0, false
}
