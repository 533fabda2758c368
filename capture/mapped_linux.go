package capture

import (
	"os"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// releaseMapped tells the kernel this process no longer needs the pages
// of the capture's memory map it has touched. The file is mapped
// read-only and shared, so nothing is lost: a later read faults the page
// back in from the page cache. A scan over every body of a large capture
// would otherwise count the whole file in the viewer's resident memory.
func (r *Reader) releaseMapped() { releaseDB(r.db, r.path) }

// releaseDB releases the pages of db's memory map (the file at path).
// bbolt maps its file read-only and shared, writing through the file, so
// this holds for a database being written too.
func releaseDB(db *bolt.DB, path string) {
	info := db.Info()
	st, err := os.Stat(path)
	if err != nil || info.Data == 0 || st.Size() == 0 {
		return
	}
	// The raw syscall takes the mapping's address as it is; making a Go
	// slice of it would need a uintptr-to-pointer conversion.
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, info.Data, uintptr(st.Size()), unix.MADV_DONTNEED)
}

// releaseRange releases the whole pages of the mapped file that view, a
// slice of it, covers.
func releaseRange(view []byte) {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(view)))
	end := start + uintptr(len(view))
	start = (start + page - 1) &^ (page - 1)
	end &^= page - 1
	if end <= start {
		return
	}
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_DONTNEED)
}

// uncache drops the file's pages in [off, off+n) from the page cache, if
// they are written back; the kernel skips pages still dirty or mapped.
func uncache(f *os.File, off, n int64) {
	_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
}
