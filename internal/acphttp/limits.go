package acphttp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// DefaultMaxMessageSize bounds one POST body or WebSocket message on serve
// and proxy. Agents send images of 10–100 MB in one message, base64 in
// JSON, so up to ~135 MB on the wire; 256 MiB takes those with room to
// spare while a message costs at most ~512 MiB (it and the capture's
// copy). The stdio path has no limit.
const DefaultMaxMessageSize = 256 << 20

// RetryAfter is what a 503 for a full server asks clients to wait.
const RetryAfter = 5 * time.Second

// WSControlWait bounds how long a forwarded control frame (close, ping,
// pong) may wait for the socket.
const WSControlWait = 5 * time.Second

// bigMessage is the size after which a handler gives the memory a
// message took back to the OS once it is done with it, so RSS returns to
// its baseline between huge messages rather than staying at the peak.
const bigMessage = 16 << 20

// ErrTooBig says a message is over the --max-message-size limit.
var ErrTooBig = errors.New("message over the size limit")

// ReadBody reads a POST body of at most limit bytes. A Content-Length
// over the limit is refused before anything is read; a body of unknown
// length is refused as soon as it crosses the limit. A known length is
// read into one buffer of that size, so a body never costs more than its
// size (io.ReadAll's doubling would cost up to twice as much).
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, ErrTooBig
	}
	if r.ContentLength >= 0 {
		buf := make([]byte, r.ContentLength)
		n, err := io.ReadFull(r.Body, buf)
		return buf[:n], err
	}
	return readUpTo(r.Body, limit)
}

// readUpTo reads r to EOF, or fails with ErrTooBig once more than limit
// bytes have come. A body that fits a scratch buffer, as nearly every
// message does, is read there and copied once into memory of its size;
// a longer one goes on in growing chunks.
func readUpTo(r io.Reader, limit int64) ([]byte, error) {
	sp := scratches.Get().(*[]byte)
	defer scratches.Put(sp)
	s := *sp
	if limit < int64(len(s)) {
		s = s[:limit+1] // one byte past the limit tells it was crossed
	}
	n, err := io.ReadFull(r, s)
	switch {
	case int64(n) > limit:
		return nil, ErrTooBig
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return exactCopy(s[:n]), nil
	case err != nil:
		return exactCopy(s[:n]), err
	}
	b := BodyBuffer{chunks: [][]byte{append(make([]byte, 0, 2*len(s)), s...)}, n: n}
	for {
		n, err := r.Read(b.room())
		b.grew(n)
		if int64(b.n) > limit {
			return nil, ErrTooBig
		}
		if err == io.EOF {
			return b.Bytes(), nil
		}
		if err != nil {
			return b.Bytes(), err
		}
	}
}

// scratches are the buffers readUpTo reads into first. Reading a body
// of unknown length into growing chunks cost a 16 KiB WebSocket message
// six allocations the runtime zeroes, a copy to join them and the
// collector's work after, on the path that relays it.
var scratches = sync.Pool{New: func() any { b := make([]byte, scratchSize); return &b }}

const scratchSize = 64 << 10

// exactCopy returns a copy of b with no spare room (the capture keeps it).
func exactCopy(b []byte) []byte {
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

// BodyBuffer collects a body of unknown length in chunks of growing size:
// growing never copies what it holds, so a body costs its size, not the
// up to three times its size that doubling a slice leaves behind until a
// collection. bytes joins the chunks once, at the end.
type BodyBuffer struct {
	chunks [][]byte
	n      int
}

// The chunks start small, for the many small messages, and double up to
// maxChunk, which bounds what a body may overshoot its size by.
const (
	firstChunk = 512
	maxChunk   = 4 << 20
)

// NewBodyBuffer returns a buffer holding a body of size bytes in one
// chunk, without any copy at the end.
func NewBodyBuffer(size int) BodyBuffer {
	return BodyBuffer{chunks: [][]byte{make([]byte, 0, size)}}
}

func (b *BodyBuffer) Len() int { return b.n }

// room returns the free space of the last chunk, adding a chunk when it
// is full; grew keeps what was put there.
func (b *BodyBuffer) room() []byte {
	last := len(b.chunks) - 1
	if last < 0 || len(b.chunks[last]) == cap(b.chunks[last]) {
		size := firstChunk
		if last >= 0 {
			size = min(2*cap(b.chunks[last]), maxChunk)
		}
		b.chunks = append(b.chunks, make([]byte, 0, size))
		last++
	}
	c := b.chunks[last]
	return c[len(c):cap(c)]
}

// grew keeps the n bytes just put in room.
func (b *BodyBuffer) grew(n int) {
	last := len(b.chunks) - 1
	b.chunks[last] = b.chunks[last][:len(b.chunks[last])+n]
	b.n += n
}

// write keeps a copy of p.
func (b *BodyBuffer) Append(p []byte) {
	for len(p) > 0 {
		k := copy(b.room(), p)
		b.grew(k)
		p = p[k:]
	}
}

// bytes returns the body in one slice of its length and empties the
// buffer: whoever keeps it (the capture) keeps no spare room. Joining a
// big body's chunks leaves them as garbage the size of the body; they
// are collected at once, or the next big allocation (the capture's
// commit) would come on top of them.
func (b *BodyBuffer) Bytes() []byte {
	chunks := b.chunks
	*b = BodyBuffer{}
	if len(chunks) == 1 && len(chunks[0]) == cap(chunks[0]) {
		return chunks[0]
	}
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	out := make([]byte, 0, n)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil
	}
	ReleaseMemory(n)
	return out
}

// ReadMessage reads one WebSocket message of at most limit bytes; a
// longer one fails with ErrTooBig once limit bytes have been read. The
// library's own read limit is not used: it closes with 1009 and no reason,
// where the peer must learn the limit and the flag.
func ReadMessage(ws *websocket.Conn, limit int64) (int, []byte, error) {
	mt, r, err := ws.NextReader()
	if err != nil {
		return mt, nil, err
	}
	b, err := readUpTo(r, limit)
	return mt, b, err
}

// sizeText writes a byte count the way --max-message-size accepts it.
func sizeText(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// TooBigText is the 413's body: the size when known, the limit and the
// flag that raises it.
func TooBigText(size, limit int64) string {
	what := "the message is"
	if size > 0 {
		what = fmt.Sprintf("the message (%d bytes) is", size)
	}
	return fmt.Sprintf("%s over the %s limit; raise it with --max-message-size, e.g. --max-message-size %s",
		what, sizeText(limit), sizeText(2*limit))
}

// HeldTooBigText says why an agent's event over the limit was not passed
// on under interception, which delivers only messages it holds whole.
func HeldTooBigText(limit int64) string {
	return "an event over the " + sizeText(limit) + " limit could not be held for interception and was not passed on; raise it with --max-message-size"
}

// WSBufferSize is the read and write buffer of a WebSocket that relays
// messages. gorilla/websocket's default, 4 KiB, writes a message as a
// frame and a write call per 4 KiB.
const WSBufferSize = 64 << 10

// WSWriteBuffers shares write buffers between WebSockets: a socket holds
// one only while it writes a message.
var WSWriteBuffers = &sync.Pool{}

// WSTooBigReason is the reason of a 1009 close; it must fit the 123 bytes
// a close frame allows.
func WSTooBigReason(limit int64) string {
	return "message over the " + sizeText(limit) + " limit; raise acpscope's --max-message-size"
}

// WSMalformedReason is the reason of the 1002 recorded when side sends
// a frame no peer may send (why): it passed on as it came, up to limit.
func WSMalformedReason(side string, why error, limit int64) string {
	return "the " + side + "'s side sent a malformed WebSocket frame (" + why.Error() +
		"); passed on as it came, up to --max-message-size (" + sizeText(limit) + ")"
}

// WSCloseEnv adds the "ws-close" header of a recorded close to env: the
// code, then the reason if there is one.
func WSCloseEnv(env *wire.Envelope, code int, reason string) *wire.Envelope {
	text := strconv.Itoa(code)
	if reason != "" {
		text += " " + reason
	}
	env.Headers = map[string]string{"ws-close": text}
	return env
}

// ReleaseMemory gives a big message's memory back to the OS once the
// handler has dropped it (the capture does the same after its commit).
func ReleaseMemory(size int) {
	if size > bigMessage {
		debug.FreeOSMemory()
	}
}
