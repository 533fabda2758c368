package capture

import (
	"sync"
	"sync/atomic"
)

// chunkBuffers recycles the memory of large chunks and frames. A busy
// stream is read in chunks of up to a pump buffer (256 KiB), and copying
// each into fresh memory made the kernel fault in and zero every page of
// it, on the forwarding goroutine, once per byte forwarded: a third of
// the proxy's CPU time when it carried 10 MB lines. The framer gives a
// chunk back once it holds no piece of it (wire.Framer.Release), the
// builder a frame (an SSE event, a WebSocket message) once it has copied
// it into a segment, and the next copy reuses it.
//
// Buffers come in five sizes, 16 KiB to 256 KiB; a copy takes the
// smallest that fits and only if it fills at least half of it, so memory
// in the queue stays within twice the bytes the tap accounts for. Smaller
// copies come from the ordinary allocator, which serves them without
// faults. At most keptBytes, all sizes together, wait for reuse: the
// pieces of a 100 MiB line are given back together, and keeping them all
// would hold that memory for the rest of the run.
type chunkBuffers struct {
	once sync.Once
	free [len(chunkClasses)]chan []byte
	kept atomic.Int64 // bytes waiting in free
}

// keptBytes is sized by the two targets it trades between. A huge line
// arrives in pipe-sized chunks (64 KiB) that all wait in the framer until
// its newline; every chunk the pool cannot give back is faulted in on the
// forwarding goroutine. 32 MiB covers a 20 MB line echoed (both
// directions at once, back to back) and most of a 100 MB one: in
// `acpscope bench` the 20 MB echo went from a median 1.34× the minimal
// forwarder to 1.11×, the 100 MB one from 1.22× to 1.08× (ten runs of
// each). The pool is memory held for the run, and peak RSS with one
// 100 MiB line must stay under 64 MiB + twice the line (264 MiB): it rose
// from 230 MiB to 255 MiB; 40 MiB would leave 1.5 MiB to spare.
const keptBytes = 32 << 20

const maxPooledChunk = 256 << 10

var chunkClasses = [...]int{maxPooledChunk / 16, maxPooledChunk / 8, maxPooledChunk / 4, maxPooledChunk / 2, maxPooledChunk}

// Every frame cut straight from a pooled chunk fits in a segment, so the
// builder copies it there before the chunk is reused (this fails to
// compile if the sizes ever disagree).
var _ [segMaxBytes - maxPooledChunk]struct{}

// class returns the index of the size class for n bytes, or -1.
func (cb *chunkBuffers) class(n int) int {
	for i, size := range chunkClasses {
		if n <= size {
			if n*2 < size {
				return -1
			}
			return i
		}
	}
	return -1
}

func (cb *chunkBuffers) init() {
	for i, size := range chunkClasses {
		cb.free[i] = make(chan []byte, keptBytes/size)
	}
}

// copyOf returns a copy of src, in recycled memory of class c (from
// class; negative: ordinary memory, for a size the pool does not keep).
func (cb *chunkBuffers) copyOf(c int, src []byte) []byte {
	if c < 0 {
		return append(make([]byte, 0, len(src)), src...)
	}
	cb.once.Do(cb.init)
	select {
	case b := <-cb.free[c]:
		cb.kept.Add(-int64(cap(b)))
		return append(b[:0], src...)
	default:
		return append(make([]byte, 0, chunkClasses[c]), src...)
	}
}

// hasFree reports whether a recycled buffer of class c (c >= 0) waits.
func (cb *chunkBuffers) hasFree(c int) bool {
	cb.once.Do(cb.init)
	return len(cb.free[c]) > 0
}

// release takes back a chunk copyOf made, once nothing refers to it.
func (cb *chunkBuffers) release(b []byte) {
	for i, size := range chunkClasses {
		if cap(b) == size {
			cb.once.Do(cb.init)
			if cb.kept.Add(int64(size)) > keptBytes {
				cb.kept.Add(-int64(size)) // enough are kept: this one goes to the collector
				return
			}
			select {
			case cb.free[i] <- b[:0]:
			default:
				cb.kept.Add(-int64(size))
			}
			return
		}
	}
}
