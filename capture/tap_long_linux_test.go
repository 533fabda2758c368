package capture

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// noRoomChildEnv makes the test binary assemble a long line in a process
// whose address space is capped (see TestLongLineWithoutRoom).
const noRoomChildEnv = "ACPSCOPE_CAPTURE_TEST_NO_ROOM"

func init() { children[noRoomChildEnv] = noRoomChild }

// noRoomSlack is how much address space the child may take beyond what it
// holds when the cap is set: room for a long line to start and grow a
// little, never for the line it is sent.
const noRoomSlack = 256 << 20

// noRoomChild caps its own address space, then hands the tap a line that
// must outgrow it, then a short line; it prints what the writer counted.
func noRoomChild(path string) int {
	w, err := Create(path, WriterOptions{NoFeed: true, NoSync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	chunk := bytes.Repeat([]byte{'r'}, 1<<20)
	// idle waits for the builder to take everything queued, so that the
	// tap may take the line over; a minute is generous on a busy machine.
	idle := func() bool {
		deadline := time.Now().Add(time.Minute)
		for len(w.tap.queue) != 0 || w.tap.queued.Load() != 0 {
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "capture never went idle: %d items, %d bytes queued after a minute\n", len(w.tap.queue), w.tap.queued.Load())
				return false
			}
			time.Sleep(100 * time.Microsecond)
		}
		return true
	}
	reserveForRuntime()
	if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: vmSize() + noRoomSlack, Max: unix.RLIM_INFINITY}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 1
	}
	for range 4 * noRoomSlack >> 20 {
		if !idle() {
			return 1
		}
		w.Chunk(0, StreamAgent, 1, chunk)
	}
	unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY})
	if !idle() {
		return 1
	}
	w.Chunk(0, StreamAgent, 1, []byte("\n"+notif(1)+"\n"))
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st := w.Stats()
	fmt.Println(st.Loss.Messages, st.Loss.Bytes, mappingsInUse(&w.lines))
	return 0
}

// reserveForRuntime has the Go runtime take, before the cap, the address
// space it will want under it: heap arenas (given back to the kernel but
// kept mapped, to be reused) and idle threads, which it keeps rather
// than creating new ones with fresh stacks.
func reserveForRuntime() {
	ballast := make([]byte, 256<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	runtime.KeepAlive(ballast)
	ballast = nil
	runtime.GC()
	debug.FreeOSMemory()
	var wg sync.WaitGroup
	for range 16 { // blocked in the kernel, each holds a thread
		wg.Add(1)
		go func() {
			defer wg.Done()
			unix.Nanosleep(&unix.Timespec{Nsec: 20e6}, nil)
		}()
	}
	wg.Wait()
}

// vmSize returns this process's address space in bytes.
func vmSize() uint64 {
	kib, _ := procStatusKiB("VmSize")
	return uint64(kib) << 10
}

// TestLongLineWithoutRoom: when the memory of a line the tap assembles
// cannot grow, the line is dropped and counted, its memory given back,
// and the line after it is recorded; the process goes on. It runs in a
// child whose address space is capped, so that the kernel refuses the
// growth for real.
func TestLongLineWithoutRoom(t *testing.T) {
	path := tempCapture(t)
	out := runChild(t, noRoomChildEnv, path)
	var lostMsgs, lostBytes int64
	var mappings int
	if _, err := fmt.Sscan(string(out), &lostMsgs, &lostBytes, &mappings); err != nil {
		t.Fatalf("child said %q", out)
	}
	if lostMsgs != 1 || lostBytes < longLineStart || mappings != 0 {
		t.Errorf("lost %d messages, %d bytes, %d mappings in use; want the long line lost (what the tap held of it), none in use",
			lostMsgs, lostBytes, mappings)
	}
	r := openTest(t, path)
	found := false
	for seq := uint64(1); seq <= r.Last(); seq++ {
		_, body := recordAndBody(t, r, seq)
		if string(body) == notif(1) {
			found = true
		} else if len(body) > 4*noRoomSlack-1 {
			t.Errorf("#%d: the long line is recorded whole", seq)
		}
	}
	if !found {
		t.Error("the line after the lost one is not recorded")
	}
}
