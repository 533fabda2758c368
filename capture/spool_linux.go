package capture

import (
	"os"

	"golang.org/x/sys/unix"
)

// punchHole gives back the disk under the file's bytes [from, to) and
// returns where the bytes still held begin: to, or from if the file
// system cannot punch holes (the bytes are then given back when the
// spool empties).
func punchHole(f *os.File, from, to int64) int64 {
	if to <= from {
		return from
	}
	err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, from, to-from)
	if err != nil {
		return from
	}
	return to
}

// freeBytes is the space an unprivileged user may still write in dir's
// file system, 0 if unknown.
func freeBytes(dir string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
