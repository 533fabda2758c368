package proxy

import (
	"os"
	"runtime"
	"syscall"
)

// floorInBackground runs the calling goroutine at capture's low priority
// (nice 10, its thread locked), as capture runs its builder and
// committer, so the floor takes only what forwarding leaves. The extra
// processors capture gives the scheduler come from a capture writer
// floorProxy makes (see there).
func floorInBackground() {
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 10)
}

// floorDatasync is what bbolt syncs a commit with: fdatasync(2).
func floorDatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
