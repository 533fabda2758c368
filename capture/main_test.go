package capture

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// childEnv makes the test binary act as a writing proxy (see writeChild).
const childEnv = "ACPSCOPE_CAPTURE_TEST_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(writeChild(path))
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
