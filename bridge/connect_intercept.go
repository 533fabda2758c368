package bridge

import (
	"errors"

	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Interception on connect (ConnectOptions.Intercept). The editor's side
// of connect is stdio, where messages are whole lines, so a fault plan or
// a person holding messages acts there, as on the stdio proxy: each line
// from the editor, and each message from the server, goes to the
// interceptor instead of on; what it delivers is written and recorded
// by the connectPort.
//
// A message is recorded once, as what happened to it. The links record
// every frame with its HTTP envelope as they carry it; under
// interception they record only the frames that carry no message
// (statuses), and the port records the messages, without an envelope:
// what reached each side, and when, is what the capture then tells.
// Without an interceptor none of this runs.

// errClosedByFault is what sending to a side a fault rule closed returns.
var errClosedByFault = errors.New("the connection was closed by a fault rule")

// statusOnly records what a link hands over except messages: under
// interception the port records those.
type statusOnly struct{ tap.Recorder }

func (s statusOnly) Frame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	// Binary WebSocket frames are not messages either: no editor sees them.
	if env != nil && (env.Stream == wire.StreamHTTPControl || flags&wire.FlagBinary != 0) {
		s.Recorder.Frame(conn, dir, t, b, flags, env)
	}
}

func (s statusOnly) TakeFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	s.Frame(conn, dir, t, b, flags, env)
}

// connectPort is the tap.Port of connect's one connection.
type connectPort struct {
	c    *connector
	rec  tap.Recorder // the run's recorder, for the messages
	link link
}

func (p *connectPort) Deliver(dir wire.Dir, msg []byte, f *protocol.Fault) error {
	if p.c.closedByFault.Load() {
		return errClosedByFault
	}
	if f == nil {
		p.rec.Frame(connectConn, dir, tap.Now(), msg, 0, nil)
	} else {
		p.rec.Altered(connectConn, dir, tap.Now(), msg, nil, f)
	}
	if dir == wire.DirClient {
		return p.link.send(msg)
	}
	return p.c.emit(msg)
}

func (p *connectPort) Record(dir wire.Dir, t int64, msg []byte, f *protocol.Fault) {
	p.rec.Altered(connectConn, dir, t, msg, nil, f)
}

// Close ends the connection as if the server had gone away.
func (p *connectPort) Close() {
	p.c.closedByFault.Store(true)
	p.c.fail(lostf("a fault rule closed the connection"))
}

// Kill: connect starts no agent; a rule's kill ends the connection.
func (p *connectPort) Kill() { p.Close() }

// intercept routes the connection through opts.Intercept, if any: it
// returns what the stdin pump hands each editor line to.
func (b *connector) intercept(l link) func(msg []byte) error {
	if b.opts.Intercept == nil {
		return l.send
	}
	port := &connectPort{c: b, rec: b.fullRec, link: l}
	b.ic = b.opts.Intercept.Open(connectConn, port)
	return func(msg []byte) error {
		return b.ic.Message(wire.DirClient, tap.Now(), append([]byte(nil), msg...))
	}
}

// fromServer passes one message from the server on toward the editor:
// straight, or through the interceptor.
func (b *connector) fromServer(msg []byte) error {
	if b.ic == nil {
		return b.emit(msg)
	}
	return b.ic.Message(wire.DirAgent, tap.Now(), msg)
}
