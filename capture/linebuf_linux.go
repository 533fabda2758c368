package capture

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// lineBuffers holds the lines that span chunks once the builder
// assembles them (wire.Framer.Alloc). A line past mappedLineBytes goes to
// an anonymous mapping that asks for huge pages, and once the line is
// committed the mapping waits in spare for the next such line rather
// than going back to the OS. Memory the process has not touched lately
// is what costs: on a virtual machine, perf showed the builder spending
// 2.7 ms per MB of a 100 MB line in the kernel, zeroing fresh pages for
// it, and a fifth of that once spare mappings were reused. At most
// spareLines mappings are kept, told to the kernel it may reclaim them
// (MADV_FREE) should memory run short.
//
// The builder alone calls alloc and take; the committer, giveBack.
type lineBuffers struct {
	mapped map[*byte]int // base of each mapping in use → its length
	spare  chan []byte   // committed mappings, whole, for reuse
	made   int           // mappings made so far
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
		var err error
		m, err = unix.Mmap(-1, 0, (n+hugePage-1)&^(hugePage-1), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil { // out of mappings: ordinary memory still works
			return make([]byte, 0, n)
		}
		_ = unix.Madvise(m, unix.MADV_HUGEPAGE) // best effort: without it, 4 KiB pages
		lb.made++
	}
	if lb.mapped == nil {
		lb.mapped = make(map[*byte]int)
	}
	lb.mapped[unsafe.SliceData(m)] = len(m)
	return m[:0:n]
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
