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
// it into a segment, and the next copy reuses it. Without one to reuse,
// a copy is cut from a slab of memory that asks for huge pages.
//
// Buffers come in five sizes, 16 KiB to 256 KiB; a copy takes the
// smallest that fits and only if it fills at least half of it, so memory
// in the queue stays within twice the bytes the tap accounts for. Smaller
// copies come from the ordinary allocator, which serves them without
// faults. At most keptBytes, all sizes together, wait for reuse: the
// pieces of a 100 MiB line are given back together, and keeping them all
// would hold that memory for the rest of the run.
type chunkBuffers struct {
	kept  atomic.Int64 // bytes waiting in free, all classes
	free  [len(chunkClasses)]freeList
	slabs [len(chunkClasses)]slab
}

// freeList holds one class's buffers waiting for reuse, the last given
// back on top: that one was copied from a moment ago and is likeliest
// still in the cache, and a copy into memory the cache has lost runs at
// half the speed or less. (A queue handed out the coldest buffer of
// hundreds cycling through it.)
type freeList struct {
	mu  sync.Mutex
	top []([]byte)
}

func (f *freeList) push(b []byte) {
	f.mu.Lock()
	f.top = append(f.top, b)
	f.mu.Unlock()
}

func (f *freeList) pop() ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.top)
	if n == 0 {
		return nil, false
	}
	b := f.top[n-1]
	f.top[n-1] = nil
	f.top = f.top[:n-1]
	return b, true
}

func (f *freeList) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.top)
}

// slab is the memory new buffers of one class are cut from when none
// waits for reuse. A busy stream's chunks need fresh memory until the
// pool is warm, and a huge line's until its newline, and the tap copies
// them on the forwarding goroutine. Cut from slabs that ask for huge
// pages, that memory faults in 2 MiB at a time rather than 4 KiB. On a
// virtual machine where a 4 KiB fault costs 14-16 µs, slabs with the
// builder's huge-page lines (lineBuffers) took a 100 MB line echoed
// through the proxy from 2.44-2.65× the minimal forwarder to 1.20-1.78×,
// and a 20 MB one from 1.30-1.44× to 0.85-1.51× (acpscope bench, five
// pairs of runs alternating with the build before).
type slab struct {
	mu   sync.Mutex
	free []byte // the part of the current slab not yet handed out
}

// slabBytes is the size of a slab. A slab is garbage once every buffer
// cut from it is, so one live buffer can hold this much; 8 MiB slabs
// held peak RSS with a 100 MiB line at 263-265 MiB, against 255 MiB with
// 4 MiB and the limit of 264 (see keptBytes).
const slabBytes = 4 << 20

// keptBytes is sized by the two targets it trades between. A huge line
// arrives in pipe-sized chunks (64 KiB) that all wait in the framer until
// its newline; every chunk the pool cannot give back is cut from a slab
// on the forwarding goroutine. Before the slabs, 32 MiB took the 20 MB
// echo in `acpscope bench` from a median 1.34× the minimal forwarder to
// 1.11×, and the 100 MB one from 1.22× to 1.08×. The pool is memory held
// for the run, and peak RSS with one 100 MiB line must stay under
// 64 MiB + twice the line (264 MiB). With slabs, whose huge pages count
// whole, 32 MiB came to 263-265 MiB and 24 MiB to 255 MiB. Since the
// tap assembles a line past longLineStart itself, only that much of a
// huge line waits in the framer.
const keptBytes = 24 << 20

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

// copyOf returns a copy of src, in recycled memory of class c (from
// class; negative: ordinary memory, for a size the pool does not keep).
func (cb *chunkBuffers) copyOf(c int, src []byte) []byte {
	return append(cb.empty(c, len(src)), src...)
}

// alloc returns n bytes, in recycled memory when the pool keeps the size
// (the spool reads data back into it). The bytes are not zeroed.
func (cb *chunkBuffers) alloc(n int) []byte {
	return cb.empty(cb.class(n), n)[:n]
}

// empty returns an empty buffer with room for n bytes, of class c.
func (cb *chunkBuffers) empty(c, n int) []byte {
	if c < 0 {
		return make([]byte, 0, n)
	}
	if b, ok := cb.free[c].pop(); ok {
		cb.kept.Add(-int64(cap(b)))
		return b[:0]
	}
	return cb.slabs[c].cut(chunkClasses[c])
}

// cut returns n bytes of fresh memory, empty.
func (s *slab) cut(n int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cap(s.free) < n {
		s.free = make([]byte, 0, slabBytes)
		adviseHugePages(s.free)
	}
	b := s.free[:0:n]
	s.free = s.free[n:n:cap(s.free)]
	return b
}

// hasFree reports whether a recycled buffer of class c (c >= 0) waits.
func (cb *chunkBuffers) hasFree(c int) bool {
	return cb.free[c].len() > 0
}

// release takes back a chunk copyOf made, once nothing refers to it.
func (cb *chunkBuffers) release(b []byte) {
	for i, size := range chunkClasses {
		if cap(b) == size {
			if cb.kept.Add(int64(size)) > keptBytes {
				cb.kept.Add(-int64(size)) // enough are kept: this one goes to the collector
				return
			}
			cb.free[i].push(b[:0])
			return
		}
	}
}
