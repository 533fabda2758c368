package capture

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lineBuffers holds the lines that span chunks once the builder
// assembles them (wire.Framer.Alloc), and the long lines the tap
// assembles as they arrive (startLong, growLong). A line past
// mappedLineBytes goes to
// an anonymous mapping that asks for huge pages, and once the line is
// committed the mapping waits in spare for the next such line rather
// than going back to the OS. Memory the process has not touched lately
// is what costs: on a virtual machine, perf showed the builder spending
// 2.7 ms per MB of a 100 MB line in the kernel, zeroing fresh pages for
// it, and a fifth of that once spare mappings were reused. At most
// spareLines mappings are kept, told to the kernel it may reclaim them
// (MADV_FREE) should memory run short.
//
// The builder calls alloc and take, the tap's streams startLong and
// growLong, the committer giveBack (and the tap, for a line it drops).
type lineBuffers struct {
	mu     sync.Mutex
	mapped map[*byte]int // base of each mapping in use → its length
	made   int           // mappings made so far
	spare  chan []byte   // committed mappings, whole, for reuse
}

// mappedLineBytes is the size past which a line is assembled in a
// mapping. A mapping is whole huge pages, and a line waits in it until
// its group is committed: past 4 MiB the rounding wastes at most a
// third, where lines of a few hundred KiB, each in 2 MiB of its own,
// would hold several times their bytes.
const mappedLineBytes = 4 << 20

// spareLines is how many mappings wait for reuse: two, one for each
// direction of a huge request and its huge answer.
const spareLines = 2

// hugePage is the unit mappings are sized in.
const hugePage = 2 << 20

// alloc returns empty memory with room for n bytes (wire.Framer.Alloc).
func (lb *lineBuffers) alloc(n int) []byte {
	if n <= mappedLineBytes {
		return make([]byte, 0, n)
	}
	m := lb.mapping(n)
	if m == nil { // out of mappings: ordinary memory still works
		return make([]byte, 0, n)
	}
	return m[:0:n]
}

// mapping returns a mapping in use of at least n bytes, a spare one if
// one is large enough, or nil if none can be made.
func (lb *lineBuffers) mapping(n int) []byte {
	m := lb.reuse(n)
	if m == nil {
		var err error
		m, err = unix.Mmap(-1, 0, wholeHugePages(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return nil
		}
		_ = unix.Madvise(m, unix.MADV_HUGEPAGE) // best effort: without it, 4 KiB pages
		lb.mu.Lock()
		lb.made++
		lb.mu.Unlock()
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.mapped == nil {
		lb.mapped = make(map[*byte]int)
	}
	lb.mapped[unsafe.SliceData(m)] = len(m)
	return m
}

// wholeHugePages rounds n up to whole huge pages.
func wholeHugePages(n int) int { return (n + hugePage - 1) &^ (hugePage - 1) }

// startLong returns a mapping, empty, with room for at least n bytes,
// for a line the tap assembles as it arrives: a spare one if one waits;
// nil if none can be made.
func (lb *lineBuffers) startLong(n int) []byte {
	select {
	case m := <-lb.spare: // whatever its size: growLong makes room
		lb.mu.Lock()
		if lb.mapped == nil {
			lb.mapped = make(map[*byte]int)
		}
		lb.mapped[unsafe.SliceData(m)] = len(m)
		lb.mu.Unlock()
		return lb.growLong(m[:0], n)
	default:
	}
	if m := lb.mapping(n); m != nil {
		return m[:0]
	}
	return nil
}

// growLong returns b, a line begun by startLong, with room for at least n
// bytes: the kernel moves the mapping's pages to a larger one without
// copying a byte (mremap), at least doubling it. It returns nil, with b's
// mapping given back, if the mapping cannot grow.
func (lb *lineBuffers) growLong(b []byte, n int) []byte {
	if n <= cap(b) {
		return b
	}
	p := unsafe.SliceData(b[:cap(b)])
	lb.mu.Lock()
	old := unsafe.Slice(p, lb.mapped[p])
	lb.mu.Unlock()
	g, err := unix.Mremap(old, wholeHugePages(max(n, 2*len(old))), unix.MREMAP_MAYMOVE)
	lb.mu.Lock()
	delete(lb.mapped, p)
	if err == nil {
		lb.mapped[unsafe.SliceData(g)] = len(g)
	}
	lb.mu.Unlock()
	if err != nil {
		_ = unix.Munmap(old)
		return nil
	}
	_ = unix.Madvise(g, unix.MADV_HUGEPAGE)
	return g[:len(b)]
}

// reuse returns a spare mapping of at least n bytes, or nil. One too
// small is given back to the OS: the lines have grown past it.
func (lb *lineBuffers) reuse(n int) []byte {
	for {
		select {
		case m := <-lb.spare:
			if len(m) >= n {
				return m
			}
			_ = unix.Munmap(m)
		default:
			return nil
		}
	}
}

func newLineBuffers() lineBuffers {
	return lineBuffers{spare: make(chan []byte, spareLines)}
}

// take hands over the mapping a finished line lives in, if it does, for
// giveBack once the line is committed.
func (lb *lineBuffers) take(line []byte) []byte {
	if cap(line) == 0 {
		return nil
	}
	p := unsafe.SliceData(line)
	lb.mu.Lock()
	defer lb.mu.Unlock()
	size, ok := lb.mapped[p]
	if !ok {
		return nil
	}
	delete(lb.mapped, p)
	return unsafe.Slice(p, size)
}

// giveBack keeps m for reuse, or unmaps it when enough are kept.
func (lb *lineBuffers) giveBack(m []byte) {
	_ = unix.Madvise(m, unix.MADV_FREE)
	select {
	case lb.spare <- m:
	default:
		_ = unix.Munmap(m)
	}
}

// drop unmaps the spare mappings (the Writer is done).
func (lb *lineBuffers) drop() {
	for {
		select {
		case m := <-lb.spare:
			_ = unix.Munmap(m)
		default:
			return
		}
	}
}

// allocFunc returns what wire.Framer.Alloc is set to.
func (lb *lineBuffers) allocFunc() func(int) []byte { return lb.alloc }

// adviseHugePages asks for huge pages in the whole 2 MiB pages b's
// capacity covers, before anything touches them. Best effort: the kernel
// may decline.
func adviseHugePages(b []byte) {
	b = b[:cap(b)]
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	skip := int((start+hugePage-1)&^(hugePage-1) - start)
	if whole := (len(b) - skip) &^ (hugePage - 1); skip < len(b) && whole > 0 {
		_ = unix.Madvise(b[skip:skip+whole], unix.MADV_HUGEPAGE)
	}
}
