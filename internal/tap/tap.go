package tap

import (
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Recorder receives what a transport carried: pieces of a byte stream
// (stdio, an agent's stderr), which the recorder frames into lines, or
// whole messages (an HTTP body, an SSE event's data, a WebSocket
// message) with the HTTP envelope they travelled in. Every call carries
// the connection number (0 for the stdio proxy's one connection), the
// time the bytes were received (unix ns, see Now) and the exact bytes.
//
// An implementation must copy b unless told it may keep it (TakeFrame),
// never block, and be safe for calls from several goroutines. It may keep
// env: callers never touch an envelope again once they have handed it
// over. *capture.Writer implements Recorder; Discard records nothing.
//
// How HTTP traffic maps to frames (the capture model):
//   - a POST body: DirClient, Stream "post";
//   - a POST response body that is JSON (initialize's 200): DirAgent,
//     Stream "post-reply", Status set;
//   - each SSE event's data: DirAgent, Stream "post-sse" (in a POST
//     response), "sse-conn" or "sse-session" (GET streams), EventID set;
//   - each WebSocket message: Stream "ws", binary ones flagged
//     wire.FlagBinary;
//   - a response that carries no message (202, 4xx, 5xx, the 502 the proxy
//     makes when the upstream is down, a GET stream opening with 200, the
//     101 of a WebSocket): DirAgent, Stream "http", Status set, body as
//     sent (usually empty; an error text when there is one);
//   - a WebSocket close: Stream "ws", empty body, Headers["ws-close"]
//     holding "CODE reason", in the direction of whoever closed.
//
// SSE comments (keep-alives) are forwarded but not recorded. A response
// the upstream compressed (Content-Encoding, when the client asked for it)
// is forwarded unchanged but only its opening is recorded: its messages
// cannot be read without decompressing, which the proxy does not do.
type Recorder interface {
	// Chunk hands over bytes read from stream s of connection conn at
	// time t. The recorder splits the stream into frames itself, so a
	// chunk may hold part of a line or many lines.
	Chunk(conn uint32, s capture.Stream, t int64, b []byte)
	// EndStream says stream s of connection conn reached its end at time
	// t; a final line without its newline is recorded as partial.
	EndStream(conn uint32, s capture.Stream, t int64)
	// Frame hands over one whole message travelling in direction dir,
	// with its flags (partial, truncated, binary) and envelope.
	Frame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope)
	// TakeFrame is Frame for a buffer the caller will never change again:
	// the recorder may keep b rather than copy it, which spares a second
	// copy of a message of hundreds of megabytes.
	TakeFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope)
	// Altered hands over one whole message that acpscope dropped,
	// changed, delayed, held or made up rather than forward it as it
	// arrived, with what it did (f, kept as is; see protocol.Fault). t is
	// when it was delivered, or given up. env is nil on stdio.
	Altered(conn uint32, dir wire.Dir, t int64, b []byte, env *wire.Envelope, f *protocol.Fault)
}

// Borrower is a Recorder that can borrow a message's memory rather than
// copy it. A transport that reads into buffers of its own (the HTTP
// proxy's event streams and big WebSocket messages) lends each whole
// message in them, so that forwarding pays for no copy; it must not
// change b until loan.Return.
// *capture.Writer is one; a Recorder that is not gets Frame instead.
type Borrower interface {
	LendFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope, loan capture.Loan)
}

// Now is the receive time stamp a transport gives what it records: wall
// clock, unix nanoseconds, as the capture stores it.
func Now() int64 { return time.Now().UnixNano() }

// Discard is a Recorder that records nothing (--no-capture). Test
// recorders embed it to implement only the calls they watch.
type Discard struct{}

// Chunk does nothing.
func (Discard) Chunk(uint32, capture.Stream, int64, []byte) {}

// EndStream does nothing.
func (Discard) EndStream(uint32, capture.Stream, int64) {}

// Frame does nothing.
func (Discard) Frame(uint32, wire.Dir, int64, []byte, wire.Flags, *wire.Envelope) {}

// TakeFrame does nothing.
func (Discard) TakeFrame(uint32, wire.Dir, int64, []byte, wire.Flags, *wire.Envelope) {}

// Altered does nothing.
func (Discard) Altered(uint32, wire.Dir, int64, []byte, *wire.Envelope, *protocol.Fault) {}

// Or returns r, or Discard when r is nil, so a transport can call its
// recorder without checking.
func Or(r Recorder) Recorder {
	if r == nil {
		return Discard{}
	}
	return r
}

// The capture's writer is the recorder of the real program.
var (
	_ Recorder = (*capture.Writer)(nil)
	_ Borrower = (*capture.Writer)(nil)
)
