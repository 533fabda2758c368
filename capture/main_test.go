package capture

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary act as a writing proxy (see writeChild).
const childEnv = "ACPSCOPE_CAPTURE_TEST_CHILD"

// children are what the test binary does instead of testing when their
// environment variable is set (to a capture path or a socket): the
// tests that need a process of their own start one.
var children = map[string]func(string) int{
	childEnv:     writeChild,
	dialChildEnv: dialChild,
	rssChildEnv:  hugeLineChild,
}

func TestMain(m *testing.M) {
	for env, child := range children {
		if v := os.Getenv(env); v != "" {
			os.Exit(child(v))
		}
	}
	os.Exit(m.Run())
}

// writeChild writes numbered notifications into a capture as fast as the
// writer takes them (fsync on) and prints the committed count on stdout
// each time it grows, until it is killed.
func writeChild(path string) int {
	w, err := Create(path, WriterOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		for i := 1; ; i++ {
			for w.Stats().Queued > 1<<20 {
				time.Sleep(100 * time.Microsecond)
			}
			w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
		}
	}()
	var reported uint64
	for {
		if c := w.Stats().Committed; c > reported {
			reported = c
			fmt.Printf("%d\n", c)
		}
		time.Sleep(time.Millisecond)
	}
}

// rssChildEnv makes the test binary write one 100 MiB line and print its
// peak RSS in KiB (see TestHugeLineRSS).
const rssChildEnv = "ACPSCOPE_CAPTURE_TEST_RSS"

// hugeLineChild hands a 100 MiB line to a writer in 64 KiB reads, as the
// proxy does, holding no copy of its own beyond one read buffer.
func hugeLineChild(path string) int {
	w, err := Create(path, WriterOptions{NoFeed: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	head := `{"jsonrpc":"2.0","method":"big","params":{"x":"`
	buf := make([]byte, 64<<10)
	for sent := 0; sent < 100<<20; sent += len(buf) {
		for i := range buf {
			buf[i] = 'a' + byte(i%26)
		}
		if sent == 0 {
			copy(buf, head)
		}
		for w.Stats().Queued > 16<<20 {
			time.Sleep(time.Millisecond)
		}
		w.Chunk(0, StreamAgent, 1, buf)
	}
	w.Chunk(0, StreamAgent, 1, []byte("\"}}\n"))
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(peakRSSKiB())
	return 0
}

// peakRSSKiB reads VmHWM, this process's own high-water mark. (getrusage
// is no good in a child: Linux carries the parent's peak across exec.)
func peakRSSKiB() int64 {
	if kib, ok := procStatusKiB("VmHWM"); ok {
		return kib
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss
}

// procStatusKiB reads one of this process's sizes in KiB from
// /proc/self/status (Linux).
func procStatusKiB(field string) (int64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib, err == nil
		}
	}
	return 0, false
}

// runChild runs the test binary as the child env names (see children),
// on the capture at path, and returns what it printed.
func runChild(t *testing.T, env, path string) []byte {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	return out
}
