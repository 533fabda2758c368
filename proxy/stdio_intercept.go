package proxy

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Interception on stdio (StdioConfig.Intercept). Without it, nothing in
// this file runs and the pumps copy bytes as they come. With it, each
// message pump writes into a splitter instead of its destination: the
// splitter frames lines and hands each to the interceptor, which delivers
// through an outlet that writes whole lines and records them. The pumps
// themselves are the same either way.

// errOutletClosed is what delivering to a side the interceptor hung up
// on returns.
var errOutletClosed = errors.New("the connection was closed by a fault rule")

// outlet writes whole messages to one side, one at a time.
type outlet struct {
	mu     sync.Mutex
	w      io.Writer
	dir    wire.Dir // of the messages it carries
	stream capture.Stream
	closer func() // closes w: the agent's stdin, our stdout
	closed bool
	buf    []byte
}

// deliver records msg, then writes it with its newline.
func (o *outlet) deliver(rec tap.Recorder, conn uint32, msg []byte, f *protocol.Fault) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errOutletClosed
	}
	o.buf = append(append(o.buf[:0], msg...), '\n')
	if f == nil {
		rec.Chunk(conn, o.stream, tap.Now(), o.buf)
	} else {
		rec.Altered(conn, o.dir, tap.Now(), msg, nil, f)
	}
	_, err := o.w.Write(o.buf)
	if cap(o.buf) > 1<<20 {
		o.buf = nil // a huge message's buffer is not kept for the next
	}
	return err
}

// raw passes bytes through as they are: a last line without a newline.
func (o *outlet) raw(rec tap.Recorder, conn uint32, b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	rec.Chunk(conn, o.stream, tap.Now(), b)
	_, _ = o.w.Write(b)
}

// close closes the destination once.
func (o *outlet) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.closed = true
		o.closer()
	}
}

// stdioPort is the tap.Port of the stdio proxy's one connection.
type stdioPort struct {
	rec      tap.Recorder
	conn     uint32
	toAgent  *outlet
	toClient *outlet
	agent    *agent.Process
}

func (p *stdioPort) outlet(dir wire.Dir) *outlet {
	if dir == wire.DirClient {
		return p.toAgent
	}
	return p.toClient
}

func (p *stdioPort) Deliver(dir wire.Dir, msg []byte, f *protocol.Fault) error {
	return p.outlet(dir).deliver(p.rec, p.conn, msg, f)
}

func (p *stdioPort) Record(dir wire.Dir, t int64, msg []byte, f *protocol.Fault) {
	p.rec.Altered(p.conn, dir, t, msg, nil, f)
}

func (p *stdioPort) Close() {
	p.toAgent.close()
	p.toClient.close()
}

func (p *stdioPort) Kill() { _ = p.agent.Kill() }

// splitter is a message pump's destination under interception: it frames
// what the pump read into lines and hands each to the interceptor.
type splitter struct {
	ic      tap.Conn
	dir     wire.Dir
	out     *outlet
	rec     tap.Recorder
	conn    uint32
	pending []byte // a line begun in an earlier read
}

func (s *splitter) Write(b []byte) (int, error) {
	n := len(b)
	t := tap.Now()
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.pending = append(s.pending, b...)
			break
		}
		line := b[:i]
		if len(s.pending) > 0 {
			s.pending = append(s.pending, line...)
			line = s.pending
		}
		err := s.ic.Message(s.dir, t, line)
		s.pending = s.pending[:0]
		if cap(s.pending) > 1<<20 {
			s.pending = nil
		}
		b = b[i+1:]
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// end runs when the pump's source ended: what the interceptor holds goes
// out, then a last line without a newline, as it came; then the stream's
// end is recorded.
func (s *splitter) end() {
	s.ic.End(s.dir)
	if len(s.pending) > 0 {
		s.out.raw(s.rec, s.conn, s.pending)
	}
	s.rec.EndStream(s.conn, s.out.stream, tap.Now())
}

// intercept rewires the session's message pumps through cfg.Intercept.
func (s *session) intercept() {
	rec := tap.Or(s.cfg.Recorder)
	port := &stdioPort{rec: rec, conn: s.cfg.Conn, agent: s.agent,
		toAgent:  &outlet{w: s.agent.Stdin, dir: wire.DirClient, stream: capture.StreamClient, closer: func() { s.agent.CloseStdin() }},
		toClient: &outlet{w: s.cfg.Stdout, dir: wire.DirAgent, stream: capture.StreamAgent, closer: func() { closeIfCloser(s.cfg.Stdout) }},
	}
	ic := s.cfg.Intercept.Open(s.cfg.Conn, port)
	in := &splitter{ic: ic, dir: wire.DirClient, out: port.toAgent, rec: rec, conn: s.cfg.Conn}
	out := &splitter{ic: ic, dir: wire.DirAgent, out: port.toClient, rec: rec, conn: s.cfg.Conn}
	s.in = newPump(s.cfg.Stdin, in, nil, s.cfg.Conn, capture.StreamClient, s.cfg.BufferSize)
	s.out = newPump(s.agent.Stdout, out, nil, s.cfg.Conn, capture.StreamAgent, s.cfg.BufferSize)
	s.afterIn = func() { in.end(); port.toAgent.close() }
	s.afterOut = func() { out.end(); port.toClient.close() }
}
