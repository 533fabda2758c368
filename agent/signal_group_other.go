//go:build unix && !linux

package agent

import "syscall"

// groupAlive reports whether any process of the group is still there.
func groupAlive(pgid int) bool {
	return pgid > 0 && syscall.Kill(-pgid, 0) == nil
}
