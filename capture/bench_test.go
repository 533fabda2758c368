package capture

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
)

// line200 returns a 200-byte session/update notification (199 bytes and
// a newline), numbered so lines differ.
func line200(i int) []byte {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"n":%d,"text":"`, i)
	tail := `"}}}`
	pad := 199 - len(head) - len(tail)
	return []byte(head + string(bytes.Repeat([]byte("x"), pad)) + tail + "\n")
}

// feedPaced hands chunks to w as fast as the writer absorbs them: the
// benchmark measures the writer's capacity, so it waits instead of
// letting the queue overflow, and reports any loss anyway.
func feedPaced(w *Writer, s Stream, chunk []byte, n int) {
	limit := w.opts.QueueBytes / 2
	for i := 0; i < n; i++ {
		for w.tap.queued.Load() > limit {
			time.Sleep(50 * time.Microsecond)
		}
		w.Chunk(0, s, time.Now().UnixNano(), chunk)
	}
}

// BenchmarkWriter200B measures records/s of 200-byte lines with fsync on
// every group commit.
func BenchmarkWriter200B(b *testing.B) {
	var chunk []byte
	const perChunk = 320 // a 64 KiB pipe read
	for i := 0; i < perChunk; i++ {
		chunk = append(chunk, line200(i)...)
	}
	chunks := max(1, b.N/perChunk)
	w := createTest(b, WriterOptions{NoFeed: true, NoSync: benchNoSync})
	b.SetBytes(int64(len(chunk)))
	b.ResetTimer()
	start := time.Now()
	feedPaced(w, StreamAgent, chunk, chunks)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	st := w.Stats()
	b.ReportMetric(float64(st.Committed)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(st.Loss.Messages), "lost")
	if st.Committed != uint64(chunks*perChunk) {
		b.Errorf("committed %d of %d", st.Committed, chunks*perChunk)
	}
}

// BenchmarkWriter10MB measures MB/s of 10 MB lines arriving in 64 KiB
// reads, fsync on.
func BenchmarkWriter10MB(b *testing.B) {
	line := []byte(bigLine(10_000_000) + "\n")
	w := createTest(b, WriterOptions{NoFeed: true, NoSync: benchNoSync})
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(line); off += 64 << 10 {
			feedPaced(w, StreamAgent, line[off:min(off+64<<10, len(line))], 1)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	st := w.Stats()
	b.ReportMetric(float64(b.N)*float64(len(line))/1e6/elapsed.Seconds(), "MB/s-committed")
	b.ReportMetric(float64(st.Loss.Messages), "lost")
}

// benchNoSync turns fsync off to see the store's ceiling apart from the
// disk (ACPSCOPE_BENCH_NOSYNC=1).
var benchNoSync = os.Getenv("ACPSCOPE_BENCH_NOSYNC") == "1"
