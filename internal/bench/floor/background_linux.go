package main

import (
	"os"
	"runtime"
	"syscall"
)

// backgroundNice is capture's priority for its builder and committer
// (capture.backgroundNice): the floor's writer runs on what forwarding
// leaves, as they do.
const backgroundNice = 10

// runInBackground lowers the calling goroutine's priority for good, as
// capture does for its own: locked to its thread, that thread reniced,
// with a processor more for the scheduler so a pump never waits for it.
func runInBackground() {
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), backgroundNice)
}

// datasync is what bbolt syncs a commit with: fdatasync(2).
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
