package proxy

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/tap"
)

// pump copies one stream: read into a reusable buffer, write those bytes
// at once, then hand them to the recorder. One write per read means a
// line of any size flows as it arrives and nothing waits for a newline;
// the reused buffer means no allocation per message.
type pump struct {
	src    io.Reader
	dst    io.Writer
	rec    tap.Recorder // nil: no capture
	conn   uint32
	stream capture.Stream
	buf    []byte

	// quiet is set by the session when it stops waiting for this pump,
	// so a pump left blocked in Read never records after the capture
	// was finished.
	quiet atomic.Bool
	// dstFailed is closed on the first write error (the reader is gone);
	// the pump keeps reading, and recording, so the writer end never
	// blocks on a full pipe.
	dstFailed chan struct{}
	srcEnded  chan struct{} // closed when src reached its end, before after runs
	done      chan struct{} // closed when run returns

	// busy is set while a chunk is being forwarded, and last holds when
	// the latest forward finished (since pumpEpoch): together they say
	// how long the source has been silent, which the shutdown ladder
	// after stdin EOF counts its grace from.
	busy atomic.Bool
	last atomic.Int64

	// Owned by run; read only after done is closed.
	n        int64
	readErr  error
	writeErr error
}

func newPump(src io.Reader, dst io.Writer, rec tap.Recorder, conn uint32, s capture.Stream, size int) *pump {
	return &pump{
		src: src, dst: dst, rec: rec, conn: conn, stream: s,
		buf:       make([]byte, size),
		dstFailed: make(chan struct{}),
		srcEnded:  make(chan struct{}),
		done:      make(chan struct{}),
	}
}

// run copies until src ends, then calls after (closing the destination
// or the agent's stdin) and marks the end of the stream.
func (p *pump) run(after func()) {
	defer close(p.done)
	for {
		n, err := p.src.Read(p.buf)
		if n > 0 {
			p.forward(p.buf[:n])
		}
		if err != nil {
			if err != io.EOF {
				p.readErr = err
			}
			break
		}
	}
	close(p.srcEnded)
	if after != nil {
		after()
	}
	if p.rec != nil && !p.quiet.Load() {
		p.rec.EndStream(p.conn, p.stream, time.Now().UnixNano())
	}
}

// forward taps the chunk, then writes it on. The tap comes first so that
// the capture's order is causal: once the other side has the bytes it may
// answer at once, and its answer must not be recorded before the message
// it answers. The tap copies and never blocks, so this costs one memcpy.
func (p *pump) forward(b []byte) {
	p.busy.Store(true)
	defer p.idle()
	if p.rec != nil && !p.quiet.Load() {
		p.rec.Chunk(p.conn, p.stream, time.Now().UnixNano(), b)
	}
	if p.writeErr == nil {
		if _, err := p.dst.Write(b); err != nil {
			p.writeErr = err
			close(p.dstFailed)
		}
	}
	p.n += int64(len(b))
}

// pumpEpoch is the origin of pump.last: monotonic, unlike wall-clock nanoseconds.
var pumpEpoch = time.Now()

func (p *pump) idle() {
	p.last.Store(int64(time.Since(pumpEpoch)))
	p.busy.Store(false)
}

// activeAt returns when the pump last forwarded a chunk, or now while it
// is forwarding one (both since pumpEpoch).
func (p *pump) activeAt(now time.Duration) time.Duration {
	if p.busy.Load() {
		return now
	}
	return time.Duration(p.last.Load())
}

// ended reports whether the source has reached its end.
func (p *pump) ended() bool {
	select {
	case <-p.srcEnded:
		return true
	default:
		return false
	}
}

// finished reports whether run has returned.
func (p *pump) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitUntil waits for the pump to finish until the deadline passes.
func (p *pump) waitUntil(deadline <-chan time.Time) bool {
	select {
	case <-p.done:
		return true
	case <-deadline:
		return false
	}
}
