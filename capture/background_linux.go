package capture

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// backgroundNice is the scheduling niceness of the builder's and the
// committer's threads. Flat out on two cores, capture's framing,
// classifying and writing competed with the forwarding path (the agent,
// the pumps, the editor) for the CPU and halved the proxy's throughput;
// at a lower priority the kernel runs capture on what forwarding leaves
// idle, and what capture cannot keep up with is dropped and counted, as
// it must be, rather than slowing the wire.
const backgroundNice = 10

// extraProcs gives the Go scheduler one processor more for each of the
// builder and the committer, once per process: a thread the kernel keeps
// waiting for its low priority still holds its processor, and without
// spare ones a pump returning from a write would wait for it.
var extraProcs sync.Once

// runInBackground lowers the calling goroutine's priority for good: it
// locks the goroutine to its thread and renices that thread. The
// goroutine must keep the lock until it returns, so the runtime ends the
// thread with it and the lowered priority never serves other goroutines.
func runInBackground() {
	extraProcs.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 2) })
	runtime.LockOSThread()
	// Best effort: without it capture still works, only at equal priority.
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), backgroundNice)
}
