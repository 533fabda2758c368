package capture

import (
	"os"

	"golang.org/x/sys/unix"
)

// releaseMapped tells the kernel this process no longer needs the pages
// of the capture's memory map it has touched. The file is mapped
// read-only and shared, so nothing is lost: a later read faults the page
// back in from the page cache. A scan over every body of a large capture
// would otherwise count the whole file in the viewer's resident memory.
func (r *Reader) releaseMapped() {
	info := r.db.Info()
	st, err := os.Stat(r.path)
	if err != nil || info.Data == 0 || st.Size() == 0 {
		return
	}
	// The raw syscall takes the mapping's address as it is; making a Go
	// slice of it would need a uintptr-to-pointer conversion.
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, info.Data, uintptr(st.Size()), unix.MADV_DONTNEED)
}
