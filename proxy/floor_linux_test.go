package proxy

import (
	"os"
	"runtime"
	"sync"
	"syscall"
)

// floorProcs gives the scheduler a processor more for the floor's
// writer, once per process, as capture does for its own goroutines.
var floorProcs sync.Once

// floorInBackground runs the calling goroutine at capture's low priority
// (nice 10, its thread locked), as capture runs its builder and
// committer, so the floor takes only what forwarding leaves.
func floorInBackground() {
	floorProcs.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1) })
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 10)
}

// floorDatasync is what bbolt syncs a commit with: fdatasync(2).
func floorDatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
