package tap

import (
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Interceptor is the one hook through which acpscope changes traffic: a
// fault plan (package fault) or a person holding messages in the
// inspector. A transport is given one only when the run asked for it
// (--faults, --allow-intercept); without one it forwards bytes exactly as
// they come and never frames them for this.
//
// With one, the transport frames each direction into whole messages and
// hands every message to the connection's Conn instead of forwarding it;
// the Conn delivers what should arrive through the Port, which writes
// and records. So a message is recorded once, as what happened to it.
type Interceptor interface {
	// Open starts intercepting connection conn, whose messages leave
	// through port. It is called once per connection, before any message.
	Open(conn uint32, port Port) Conn
}

// Conn is one intercepted connection.
type Conn interface {
	// Message handles one whole message (without its newline) that
	// arrived travelling in dir at time t. The transport calls it from
	// that direction's reader, one message at a time, and it may block
	// (a delay, a hold): only that direction of this connection waits.
	// It returns the error of delivering in dir, so the transport can
	// tell that the receiving side went away.
	Message(dir wire.Dir, t int64, msg []byte) error
	// End says no more messages will arrive in dir; whatever is still
	// held for dir is delivered before End returns.
	End(dir wire.Dir)
}

// Port is how an interceptor delivers a connection's messages: the
// transport writes and records them. Its methods are safe for concurrent
// use; each message is written whole, never interleaved with another.
type Port interface {
	// Deliver writes msg to the side that messages travelling in dir go
	// to and records it, before writing, as delivered now: with f, or as
	// an ordinary message when f is nil.
	Deliver(dir wire.Dir, msg []byte, f *protocol.Fault) error
	// Record records msg as having travelled in dir at time t without
	// delivering it (dropped, or replaced by a changed copy).
	Record(dir wire.Dir, t int64, msg []byte, f *protocol.Fault)
	// Close ends the connection as if the peers had hung up: both sides
	// see their input end.
	Close()
	// Kill stops the agent process, where the transport started one.
	Kill()
}
