package capture

import (
	"bytes"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// TestHundredMiBLine records a 100 MiB line arriving in 64 KiB reads, as
// the proxy hands it over, and reads it back byte for byte. It logs the
// peak RSS, which includes the test's own copy of the line.
func TestHundredMiBLine(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MiB line skipped in -short mode")
	}
	line := []byte(bigLine(100 << 20))
	w := createTest(t, WriterOptions{NoFeed: true})
	for off := 0; off < len(line); off += 64 << 10 {
		waitForQueueRoom(t, w)
		w.Chunk(0, StreamAgent, int64(off), line[off:min(off+64<<10, len(line))])
	}
	w.Chunk(0, StreamAgent, 1, []byte("\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Loss.Messages != 0 || st.Committed != 1 {
		t.Fatalf("stats %+v", st)
	}
	r := openTest(t, w.Path())
	body, err := r.Body(1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, line) {
		t.Fatalf("body of %d bytes differs from the %d-byte line", len(body), len(line))
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	t.Logf("peak RSS %d MiB (the test holds the line and the copy read back: 200 MiB)", ru.Maxrss>>10)
}

// TestHugeLineRSS checks the memory target in a process of its own: peak
// RSS while recording a 100 MiB line stays within 64 MiB + 2× the line.
func TestHugeLineRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MiB line skipped in -short mode")
	}
	path := tempCapture(t)
	out := runChild(t, rssChildEnv, path)
	kib, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("child said %q", out)
	}
	const limit = (64 + 2*100) << 10
	t.Logf("peak RSS recording a 100 MiB line: %d MiB (limit %d MiB)", kib>>10, limit>>10)
	if kib > limit && !raceEnabled {
		t.Errorf("peak RSS %d MiB exceeds 64 MiB + 2× the message", kib>>10)
	}
	r := openTest(t, path)
	if rec, err := r.Record(1); err != nil || rec.Size != 100<<20+3 || rec.Kind != wire.KindNotification {
		t.Errorf("record 1 = %+v, %v", rec, err)
	}
}
