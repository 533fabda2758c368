//go:build unix

package capture

import (
	"os"
	"syscall"
)

// fileOwner returns the uid owning fi's file.
func fileOwner(fi os.FileInfo) (uid int, known bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
