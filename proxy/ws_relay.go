package proxy

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/internal/wsframe"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// A proxied WebSocket without interception is relayed as bytes: each
// frame goes on as it arrived (header, masking key, fragmentation,
// compression), written straight from the read buffer, while a decoded
// copy of each message goes to the capture. Only a message over the
// limit is stopped: both sides get a 1009 close instead. Under
// interception, which must hold and rewrite whole messages, wsPipe
// relays message by message (ws_proxy.go).

// byteRelay carries one proxied WebSocket.
type byteRelay struct {
	rec     tap.Recorder
	conn    uint32
	limit   int64                 // --max-message-size, checked per frame header
	msgEnv  *wire.Envelope        // shared by every message, never changed
	env     func() *wire.Envelope // a fresh envelope, for closes
	warn    func(string)
	refused atomic.Bool // a 1009 is sent, by the first leg to see a message over the limit
	// deflate records the socket, off the forwarding path, when its ends
	// agreed on compression (ws_relay_deflate.go); nil otherwise.
	deflate *deflateRecorder
	lender  tap.Borrower // rec, when it can borrow messages
	// gather: rec records messages, so each is gathered whole. With
	// capture off (tap.Discard) frames are only counted against the limit
	// and passed on: gathering a megabyte message, to throw it away, made
	// WebSocket round trips of 1 MiB through --no-capture take 1.15-1.71x
	// the minimal reverse proxy, against 0.98-1.17x without it, and 16 KiB
	// ones 1.03-1.08x against 0.95-0.99x (BenchmarkHTTPAgainstMinimal/ws,
	// "nocapture", three runs of each build alternating).
	gather bool
	held   *atomic.Int64 // the proxy's count of message buffers out of their pools
}

// recordClose records a close (or an abrupt end) in the order of the
// socket's messages.
func (r *byteRelay) recordClose(dir wire.Dir, env *wire.Envelope) {
	if r.deflate != nil {
		r.deflate.submit(recordJob{dir: dir, t: tap.Now(), env: env})
		return
	}
	r.rec.Frame(r.conn, dir, tap.Now(), nil, 0, env)
}

// wsSide is one socket of the relay. Its leg writes it whole frames
// under mu, so a close the relay sends on its own never lands inside
// a frame.
type wsSide struct {
	mu sync.Mutex
	c  net.Conn
	// masked: frames to this side must be masked, as the agent's side
	// expects of the client we stand in for there.
	masked bool
}

// legEnd says how a leg ended: err is what stopped it (io.EOF for a
// clean end of input), closed that it had passed on a close frame.
type legEnd struct {
	leg    *relayLeg
	err    error
	closed bool
}

// relayLeg forwards the frames of one direction: read from src, the
// buffered reader of back's socket, written to dst.
type relayLeg struct {
	r         *byteRelay
	dir       wire.Dir
	src       *bufio.Reader
	dst, back *wsSide
	// The message being read: its first frame's opcode and compression,
	// its payload so far (unmasked), and the close frame's payload.
	op         wsframe.Opcode
	compressed bool
	msg        []byte
	msgLen     int64   // the message's payload so far, gathered or not
	msgBuf     *msgBuf // where msg lives, nil before the first message
	ctl        []byte
	sawClose   bool
	// trusted is the room a frame gets at once: trustedLen, or twice the
	// largest message this side has sent whole.
	trusted int64
}

// run relays both directions until each has ended or one has failed,
// then closes both sockets. After a clean end (a close passed on, then
// the end of input) the other side's socket is half-closed and the other
// direction gets WSControlWait to finish.
func (r *byteRelay) run(client, agent *wsSide, fromClient, fromAgent *bufio.Reader) {
	ends := make(chan legEnd, 2)
	up := &relayLeg{r: r, dir: wire.DirClient, src: fromClient, dst: agent, back: client}
	down := &relayLeg{r: r, dir: wire.DirAgent, src: fromAgent, dst: client, back: agent}
	go func() { ends <- up.run() }()   // client→agent leg
	go func() { ends <- down.run() }() // agent→client leg
	first := <-ends
	r.noteAbrupt(first)
	if first.closed && errors.Is(first.err, io.EOF) {
		if cw, ok := first.leg.dst.c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite() // the end of input passed on
		}
	} else {
		client.c.Close()
		agent.c.Close()
	}
	timer := time.NewTimer(acphttp.WSControlWait)
	defer timer.Stop()
	select {
	case <-ends:
	case <-timer.C: // the other side never finished its close
		client.c.Close()
		agent.c.Close()
		<-ends // its leg ends with its socket
	}
	client.c.Close()
	agent.c.Close()
	if r.deflate != nil {
		r.deflate.close() // both legs are done submitting
	}
	up.dropMessage()
	down.dropMessage()
}

// dropMessage gives back the buffer of a leg that has ended.
func (l *relayLeg) dropMessage() {
	if l.msgBuf != nil {
		l.msgBuf.Return()
		l.msg, l.msgBuf = nil, nil
	}
}

// noteAbrupt records a side that went away without a close frame, as
// the 1006 (abnormal closure) its peer will see: the capture then says
// which side ended the socket, and how. The other side's end follows
// from the relay closing it, and is not recorded.
func (r *byteRelay) noteAbrupt(end legEnd) {
	if end.closed || errors.Is(end.err, acphttp.ErrTooBig) || errors.Is(end.err, errMalformed) || errors.Is(end.err, net.ErrClosed) {
		return
	}
	gone := end.leg.dir // the side the leg reads from, unless writing failed
	var wf *writeFailed
	if errors.As(end.err, &wf) {
		gone = gone.Reverse()
	}
	reason := "the " + gone.String() + "'s side ended without a close frame: " + end.err.Error()
	r.recordClose(gone, acphttp.WSCloseEnv(r.env(), websocket.CloseAbnormalClosure, reason))
}

// run forwards frames until src ends or fails, or a message over the
// limit has been refused. Frames wholly in the read buffer go on in one
// write; a frame that is not streams through forward.
func (l *relayLeg) run() legEnd {
	for {
		h, n, err := wsframe.PeekHeader(l.src)
		if err == nil {
			err = longControl(h)
		}
		if errors.Is(err, wsframe.ErrBadLength) || errors.Is(err, errLongControl) {
			return l.malformed(err)
		}
		if err != nil {
			if n := l.src.Buffered(); n > 0 {
				l.pass(n) // a header cut by the end of input goes on as it came
			}
			return legEnd{leg: l, err: err, closed: l.sawClose}
		}
		if l.overLimit(h) {
			l.r.refuse(l)
			return legEnd{leg: l, err: acphttp.ErrTooBig}
		}
		if whole := l.wholeFrames(); whole > 0 {
			err = l.pass(whole)
		} else {
			err = l.forward(h, n)
		}
		if err != nil {
			return legEnd{leg: l, err: err, closed: l.sawClose}
		}
	}
}

// overLimit reports a data frame that would take its message past the
// limit. It compares what is left under the limit, never a sum: a
// continuation may declare a length near 2^63, and added to what came
// before it that wrapped negative and let the frame through, streamed
// for as long as its sender liked.
func (l *relayLeg) overLimit(h wsframe.Header) bool {
	if h.Op.IsControl() {
		return false
	}
	room := l.r.limit
	if h.Op == wsframe.Continuation {
		room -= l.msgLen // the frames before it are whole, and passed this check
	}
	return h.Len > room
}

// wholeFrames keeps and records the frames wholly in src's buffer, up
// to the first that is not or that would cross the limit, and returns
// the bytes they take.
func (l *relayLeg) wholeFrames() int {
	buf, _ := l.src.Peek(l.src.Buffered())
	span := 0
	for {
		h, n, err := wsframe.ParseHeader(buf[span:])
		if err != nil || n == 0 || int64(len(buf)-span-n) < h.Len || l.overLimit(h) || longControl(h) != nil {
			return span
		}
		end := span + n + int(h.Len)
		l.begin(h)
		l.keep(h, buf[span+n:end], 0)
		l.end(h)
		span = end
	}
}

// errMalformed ends a leg whose side sent a frame no peer may send;
// malformed has recorded it.
var errMalformed = errors.New("a malformed WebSocket frame")

// errLongControl is a control frame longer than RFC 6455 §5.5 allows.
var errLongControl = errors.New("a control frame over " + strconv.Itoa(wsframe.MaxControlPayload) + " bytes")

// longControl says why h is a control frame no peer may send, or nil.
func longControl(h wsframe.Header) error {
	if h.Op.IsControl() && h.Len > wsframe.MaxControlPayload {
		return fmt.Errorf("%w: %d", errLongControl, h.Len)
	}
	return nil
}

// malformed records that the leg's side sent a frame no peer may send
// (why): a length with its top bit set, after which nothing can be
// framed, or a control frame too long for one. It is recorded as the
// 1002 (protocol error) a peer answers it with, and passes on as it
// comes, for the peer to judge, up to the limit: past it the leg ends
// and the relay closes both sockets, so a lenient peer is sent no more
// than the limit unrecorded. Passing only what was buffered dropped
// whatever followed the first read; relaying a long control frame as
// one let any length through unchecked.
func (l *relayLeg) malformed(why error) legEnd {
	reason := acphttp.WSMalformedReason(l.dir.String(), why, l.r.limit)
	l.r.recordClose(l.dir, acphttp.WSCloseEnv(l.r.env(), websocket.CloseProtocolError, reason))
	for left := l.r.limit; left > 0; {
		if n := min(int64(l.src.Buffered()), left); n > 0 {
			if err := l.pass(int(n)); err != nil {
				return legEnd{leg: l, err: err, closed: l.sawClose}
			}
			left -= n
		}
		if _, err := l.src.Peek(1); err != nil {
			break
		}
	}
	return legEnd{leg: l, err: errMalformed, closed: l.sawClose}
}

// pass writes the first n bytes of src's buffer on and takes them.
func (l *relayLeg) pass(n int) error {
	b, _ := l.src.Peek(n)
	l.dst.mu.Lock()
	_, err := l.dst.c.Write(b)
	l.dst.mu.Unlock()
	l.src.Discard(n)
	return wroteTo(err)
}

// writeFailed is a leg's end by its destination: writing to it failed,
// so that side went away.
type writeFailed struct{ err error }

func (w *writeFailed) Error() string { return w.err.Error() }
func (w *writeFailed) Unwrap() error { return w.err }

// wroteTo marks a write's error as the destination's.
func wroteTo(err error) error {
	if err == nil {
		return nil
	}
	return &writeFailed{err}
}

// forward passes one frame on, its header (n bytes, still in src) and
// payload written as they arrive, and keeps its payload for the record.
// What completes a message or a close is recorded before its last bytes
// go on: the answer it provokes on the other leg must never be recorded
// first.
func (l *relayLeg) forward(h wsframe.Header, n int) error {
	l.begin(h)
	l.dst.mu.Lock()
	defer l.dst.mu.Unlock()
	var pos int64
	left := h.Len
	for {
		if l.src.Buffered() <= n && left > 0 {
			if _, err := l.src.Peek(n + 1); err != nil {
				b, _ := l.src.Peek(l.src.Buffered())
				l.dst.c.Write(b) // a frame cut short goes on as far as it came
				return err
			}
		}
		k := int(min(left, int64(l.src.Buffered()-n)))
		p, _ := l.src.Peek(n + k)
		pos = l.keep(h, p[n:], pos)
		if left -= int64(k); left == 0 {
			l.end(h)
		}
		if _, err := l.dst.c.Write(p); err != nil {
			return wroteTo(err)
		}
		l.src.Discard(n + k)
		if left == 0 {
			return nil
		}
		n = 0
	}
}

// begin notes a frame's place: the first frame of a message starts it,
// a close starts its payload afresh.
func (l *relayLeg) begin(h wsframe.Header) {
	switch {
	case h.Op == wsframe.Close:
		l.ctl = l.ctl[:0]
	case h.Op.IsControl():
	case h.Op == wsframe.Continuation:
	default:
		l.op, l.compressed = h.Op, h.Compressed
		l.msg, l.msgLen = l.msg[:0], 0
		if !l.r.gather {
			return
		}
		if room := l.firstRoom(h.Len); room > cap(l.msg) || l.msgBuf == nil && l.r.deflate == nil {
			l.growMessage(room) // sized once for a message in one frame that is trusted
		}
	}
}

// keep adds p, the payload from position pos on, to what is recorded
// (unmasked), and returns the position after it.
func (l *relayLeg) keep(h wsframe.Header, p []byte, pos int64) int64 {
	next := pos + int64(len(p))
	var into *[]byte
	switch {
	case h.Op == wsframe.Close:
		if pos >= wsframe.MaxControlPayload {
			return next
		}
		p = p[:min(int64(len(p)), wsframe.MaxControlPayload-pos)] // what a close may hold; more is not ours to read
		into = &l.ctl
	case h.Op.IsControl():
		return next
	default:
		if l.msgLen += int64(len(p)); !l.r.gather {
			return next
		}
		into = &l.msg
	}
	start := len(*into)
	if need := start + len(p); need > cap(*into) {
		if into == &l.msg {
			// past an int's range only where an int is 32 bits
			frameEnd := int(min(int64(start)+h.Len-pos, math.MaxInt))
			l.growMessage(messageRoom(need, cap(l.msg), frameEnd, h.Fin))
		} else {
			*into = slices.Grow(*into, max(need, 2*cap(*into))-start) // doubling: append grows a big slice by a quarter
		}
	}
	*into = append(*into, p...)
	if h.Masked {
		wsframe.Unmask((*into)[start:], h.Key, pos)
	}
	return next
}

// end records a message once its last frame is read, and a close.
func (l *relayLeg) end(h wsframe.Header) {
	switch {
	case h.Op == wsframe.Close:
		l.sawClose = true
		code, reason := wsframe.ParseClose(l.ctl)
		l.r.recordClose(l.dir, acphttp.WSCloseEnv(l.r.env(), code, reason))
	case h.Op.IsControl() || !h.Fin:
	default:
		if l.r.gather {
			l.record()
		}
		l.trusted = max(l.trusted, 2*l.msgLen) // not held to the limit: a frame's own length is
		l.msg, l.msgLen = l.msg[:0], 0         // a stray continuation starts from nothing
	}
}

// record hands the message read to the capture, decoded when it was
// sent compressed.
func (l *relayLeg) record() {
	r, flags := l.r, wire.Flags(0)
	if l.op != wsframe.Text {
		flags |= wire.FlagBinary
	}
	if r.deflate != nil { // recorded in order by the socket's own goroutine, decoded there
		r.deflate.submit(recordJob{dir: l.dir, t: tap.Now(), data: l.msg, flags: flags, compressed: l.compressed})
		l.msg, l.msgBuf = nil, nil
		return
	}
	if l.compressed { // without the extension agreed, the bit means nothing we can decode
		flags |= wire.FlagBinary
	}
	switch {
	case cap(l.msg) <= keptMessage:
		r.rec.Frame(r.conn, l.dir, tap.Now(), l.msg, flags, r.msgEnv) // copied; the buffer serves the next message
		return
	case r.lender != nil: // lent: the buffer is back in its pool once the capture is done
		r.lender.LendFrame(r.conn, l.dir, tap.Now(), l.msg, flags, r.msgEnv, l.msgBuf)
	default: // handed over, sparing a copy of a big one
		r.rec.TakeFrame(r.conn, l.dir, tap.Now(), l.msg, flags, r.msgEnv)
		l.msgBuf.giveAway()
	}
	l.msg, l.msgBuf = nil, nil
}

// growMessage gives the message being gathered room for n bytes.
func (l *relayLeg) growMessage(n int) {
	if l.r.deflate != nil { // given away to the socket's recorder, which keeps it: memory of its own size
		l.msg = append(make([]byte, 0, n), l.msg...)
		return
	}
	m := newMsgBuf(n, l.r.held)
	m.b = append(m.b, l.msg...)
	if l.msgBuf != nil {
		l.msgBuf.Return() // never lent: it only held the message so far
	}
	l.msg, l.msgBuf = m.b, m
}

// firstRoom is the room a message gets at its first frame, which
// declares n bytes: all of it if the buffer that takes is within what
// the side is trusted with, else the largest buffer within that.
func (l *relayLeg) firstRoom(n int64) int {
	trust := int(min(max(l.trusted, trustedLen), math.MaxInt))
	want := int(min(n, math.MaxInt))
	if _, size := msgClass(want); size > trust {
		return msgClassWithin(trust)
	}
	return want
}

// messageRoom is the room to give a message that needs need bytes and
// has room for have, in a frame that ends at frameEnd (the message's
// last when fin). Room doubles with what has arrived, and jumps to the
// frame's end once a trustRatio-th of the buffer that takes (its size
// class, rounded up) has come; a message's last frame ends it exactly.
func messageRoom(need, have, frameEnd int, fin bool) int {
	room := max(need, 2*have)
	_, jumpTo := msgClass(frameEnd)
	if frameEnd > room && need >= (jumpTo-1)/trustRatio+1 || fin && frameEnd < room { // an eighth, rounded up
		room = frameEnd
	}
	return room
}

// A frame's header declares its length before any of it comes. Room for
// up to trustedLen, or twice the largest message the same side has sent
// whole (in buffers of the pool's sizes, rounded down), is given at
// once; past it, room follows the bytes as they arrive, so a peer must
// send a trustRatio-th of the room it declares (the buffer's size class,
// rounded up) to have the proxy hold it. Given at once, 13 bytes
// declaring 200 MiB had the proxy hold 200 MiB, up to --max-message-size
// on each socket. A side that keeps sending messages of 1 MiB and a few
// bytes has each one's room at once after the first, rather than its
// first megabyte copied into a bigger buffer every time. A 100 MiB
// message in one frame, a side's first, is copied 31 MiB more, and held
// at most 1.25 times over while its room jumps.
const (
	trustedLen = 1 << 20
	trustRatio = 8
)

// keptMessage is the most a leg's message buffer keeps between messages;
// the capture copies a message this size into memory it recycles. Lent
// rather than copied, messages of 200 B took 1.12-1.15x the minimal
// reverse proxy against 1.07-1.12x (BenchmarkHTTPAgainstMinimal/ws,
// four runs alternating), and those of 16 KiB no less.
const keptMessage = 64 << 10

// refuse answers a message over the limit from l's source: a 1009 close
// naming the limit and the flag to both sides, each recorded in the
// direction it travels. Nothing of the frame that crossed the limit has
// been passed on.
func (r *byteRelay) refuse(l *relayLeg) {
	if !r.refused.CompareAndSwap(false, true) {
		return // the other leg refused first; its closes stand
	}
	reason := acphttp.WSTooBigReason(r.limit)
	r.recordClose(l.dir.Reverse(), acphttp.WSCloseEnv(r.env(), websocket.CloseMessageTooBig, reason))
	l.back.writeClose(websocket.CloseMessageTooBig, reason)
	r.recordClose(l.dir, acphttp.WSCloseEnv(r.env(), websocket.CloseMessageTooBig, reason))
	l.dst.writeClose(websocket.CloseMessageTooBig, reason)
}

// writeClose sends a close of the relay's own, between frames, giving
// up after WSControlWait.
func (s *wsSide) writeClose(code int, reason string) {
	var key [4]byte
	if s.masked {
		rand.Read(key[:])
	}
	frame := wsframe.AppendClose(nil, code, reason, s.masked, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c.SetWriteDeadline(time.Now().Add(acphttp.WSControlWait))
	s.c.Write(frame)
	s.c.SetWriteDeadline(time.Time{})
}
