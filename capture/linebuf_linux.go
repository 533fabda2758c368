package capture

import (
	"sync/atomic"
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
// The builder alone calls alloc and take, the committer giveBack. A long
// line's mapping is the tap's (startLong, growLong) and travels whole
// with the line, its capacity the mapping's length, so the tap takes no
// lock the builder or the committer might hold at low priority.
type lineBuffers struct {
	mapped map[*byte]int // base of each mapping alloc handed out → its length
	spare  chan []byte   // committed mappings, whole, for reuse
	made   atomic.Int32  // mappings made so far
	live   atomic.Int32  // mappings not yet unmapped
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
	m := lb.reuse(n)
	if m == nil {
		if m = lb.newMapping(n); m == nil { // out of mappings: ordinary memory still works
			return make([]byte, 0, n)
		}
	}
	if lb.mapped == nil {
		lb.mapped = make(map[*byte]int)
	}
	lb.mapped[unsafe.SliceData(m)] = len(m)
	return m[:0:n]
}

// newMapping maps fresh memory for n bytes, in whole huge pages, or
// returns nil.
func (lb *lineBuffers) newMapping(n int) []byte {
	m, err := unix.Mmap(-1, 0, wholeHugePages(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE) // best effort: without it, 4 KiB pages
	lb.made.Add(1)
	lb.live.Add(1)
	return m
}

// unmap gives m back to the OS.
func (lb *lineBuffers) unmap(m []byte) {
	if unix.Munmap(m) == nil {
		lb.live.Add(-1)
	}
}

// wholeHugePages rounds n up to whole huge pages.
func wholeHugePages(n int) int { return (n + hugePage - 1) &^ (hugePage - 1) }

// startLong returns a mapping, empty, with room for at least n bytes and
// the whole mapping as its capacity, for a line the tap assembles as it
// arrives: a spare one if one waits; nil if none can be made.
func (lb *lineBuffers) startLong(n int) []byte {
	select {
	case m := <-lb.spare: // whatever its size: growLong makes room
		return lb.growLong(m[:0], n)
	default:
	}
	if m := lb.newMapping(n); m != nil {
		return m[:0]
	}
	return nil
}

// growLong returns b, a line begun by startLong, with room for at least n
// bytes: the kernel moves the mapping's pages to a larger one without
// copying a byte (mremap), at least doubling it. It returns nil if the
// mapping cannot grow; b's mapping is then still the caller's.
func (lb *lineBuffers) growLong(b []byte, n int) []byte {
	if n <= cap(b) {
		return b
	}
	old := b[:cap(b)]
	g, err := unix.Mremap(old, wholeHugePages(max(n, 2*len(old))), unix.MREMAP_MAYMOVE)
	if err != nil {
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
			lb.unmap(m)
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
	if len(lb.mapped) == 0 || cap(line) == 0 {
		return nil
	}
	p := unsafe.SliceData(line)
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
		lb.unmap(m)
	}
}

// drop unmaps the spare mappings (the Writer is done).
func (lb *lineBuffers) drop() {
	for {
		select {
		case m := <-lb.spare:
			lb.unmap(m)
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
