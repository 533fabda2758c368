package capture

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// benchNoSync turns fsync off to see the store's ceiling apart from the
// disk (ACPSCOPE_BENCH_NOSYNC=1).
var benchNoSync = os.Getenv("ACPSCOPE_BENCH_NOSYNC") == "1"

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
	for i := 0; i < n; i++ {
		waitForRoom(w)
		w.Chunk(0, s, time.Now().UnixNano(), chunk)
	}
}

// waitForRoom waits until w's queue holds less than half of what the
// tap takes into fresh memory (freshQueueBytes): past that, with the
// recycled buffers in use, it drops large chunks, and the benchmarks
// measure what the writer keeps, not what it sheds.
func waitForRoom(w *Writer) {
	for w.tap.queued.Load() > min(w.opts.QueueBytes, freshQueueBytes)/2 {
		time.Sleep(50 * time.Microsecond)
	}
}

// cpuTime is the process's user+system CPU time. The machines these run
// on are shared, so CPU time per record is the honest measure of what one
// core sustains; wall-clock rates are reported beside it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRecords stops the timer and reports records/s, per second of CPU,
// and loss, for a writer closed after a run that began at start and cpu0.
// It returns the writer's counters and the run's wall and CPU time.
func reportRecords(b *testing.B, w *Writer, start time.Time, cpu0 time.Duration) (st Stats, elapsed, cpu time.Duration) {
	elapsed, cpu = time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	st = w.Stats()
	b.ReportMetric(float64(st.Committed)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(st.Committed)/cpu.Seconds(), "records/cpu-s")
	b.ReportMetric(float64(st.Loss.Messages), "lost")
	return st, elapsed, cpu
}

// BenchmarkWriter200B measures records/s of 200-byte lines with fsync on
// every group commit: wall-clock, and per second of CPU (all goroutines:
// tap copy, framing, classification, encoding, commit).
func BenchmarkWriter200B(b *testing.B) {
	var chunk []byte
	const perChunk = 320 // about a 64 KiB pipe read
	for i := 0; i < perChunk; i++ {
		chunk = append(chunk, line200(i)...)
	}
	chunks := max(1, b.N/perChunk)
	w := createTest(b, WriterOptions{NoFeed: true, NoSync: benchNoSync})
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	feedPaced(w, StreamAgent, chunk, chunks)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	st, _, _ := reportRecords(b, w, start, cpu0)
	if st.Committed != uint64(chunks*perChunk) {
		b.Errorf("committed %d of %d", st.Committed, chunks*perChunk)
	}
	// wire.Classify's share, measured apart on the same lines.
	line := line200(7)
	line = line[:len(line)-1]
	n := 200000
	t0 := time.Now()
	for i := 0; i < n; i++ {
		wire.Classify(line)
	}
	b.ReportMetric(float64(time.Since(t0).Nanoseconds())/float64(n), "classify-ns/rec")
}

// maxBenchWrite bounds what one benchmark run may write to disk.
const maxBenchWrite = 8 << 30

// BenchmarkWriter10MB measures MB/s of 10 MB lines arriving in 64 KiB
// reads, fsync on.
func BenchmarkWriter10MB(b *testing.B) {
	line := []byte(bigLine(10_000_000) + "\n")
	if total := int64(b.N) * int64(len(line)); total > maxBenchWrite {
		// A -benchtime meant for the 200 B benchmarks would fill the disk.
		b.Skipf("%d lines of 10 MB would write %d GB; use -benchtime Nx with N ≤ %d", b.N, total>>30, maxBenchWrite/int64(len(line)))
	}
	w := createTest(b, WriterOptions{NoFeed: true, NoSync: benchNoSync})
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(line); off += 64 << 10 {
			feedPaced(w, StreamAgent, line[off:min(off+64<<10, len(line))], 1)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	st := w.Stats()
	mb := float64(b.N) * float64(len(line)) / 1e6
	b.ReportMetric(mb/elapsed.Seconds(), "MB/s")
	b.ReportMetric(mb/cpu.Seconds(), "MB/cpu-s")
	b.ReportMetric(float64(st.Loss.Messages), "lost")
}

// BenchmarkWriterFrame16KiB measures MB/s of 16 KiB messages handed over
// whole, as the HTTP proxy hands over SSE events and WebSocket messages,
// each with its envelope, fsync on.
func BenchmarkWriterFrame16KiB(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + string(bytes.Repeat([]byte("x"), 16<<10)) + `"}}`)
	env := &wire.Envelope{Method: "GET", Path: "/acp", Proto: "HTTP/1.1", Status: 200, Stream: wire.StreamConnection, ConnectionID: "c-1"}
	w := createTest(b, WriterOptions{NoFeed: true, NoSync: benchNoSync})
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		waitForRoom(w)
		w.Frame(1, wire.DirAgent, time.Now().UnixNano(), msg, 0, env)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	st, elapsed, cpu := reportRecords(b, w, start, cpu0)
	mb := float64(st.Committed) * float64(len(msg)) / 1e6
	b.ReportMetric(mb/elapsed.Seconds(), "MB/s")
	b.ReportMetric(mb/cpu.Seconds(), "MB/cpu-s")
}

// BenchmarkWriter200BPairs is the worst case for the indexes: every
// record is a request (client) or its response (agent) with an id of its
// own, so each adds an id posting, and each response a pairing. It runs
// with full commits (the writer's bound of 10k records, as flat-out
// traffic makes them) and with commits of 1000 records, the size that
// 50 ms of round trips make, where a commit's fixed costs weigh more.
func BenchmarkWriter200BPairs(b *testing.B) {
	for _, per := range []int{10000, 1000} {
		b.Run(fmt.Sprintf("commit=%d", per), func(b *testing.B) { benchPairs(b, per) })
	}
}

func benchPairs(b *testing.B, perCommit int) {
	const perChunk = 160 // requests, then as many responses
	pad := string(bytes.Repeat([]byte("x"), 120))
	type pair struct{ req, resp []byte }
	var chunks []pair
	for c := 0; c < 64; c++ {
		var p pair
		for i := 0; i < perChunk; i++ {
			id := c*perChunk + i
			p.req = append(p.req, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":{"sessionId":"s","p":"%s"}}`+"\n", id, pad)...)
			p.resp = append(p.resp, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":"%s"}}`+"\n", id, pad)...)
		}
		chunks = append(chunks, p)
	}
	n := max(1, b.N/(2*perChunk))
	w := createTest(b, WriterOptions{NoFeed: true, NoSync: benchNoSync, CommitRecords: perCommit})
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < n; i++ {
		feedPaced(w, StreamClient, chunks[i%len(chunks)].req, 1)
		feedPaced(w, StreamAgent, chunks[i%len(chunks)].resp, 1)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	reportRecords(b, w, start, cpu0)
}

// BenchmarkReaderScan measures listing speed: records/s scanned without
// bodies, as the inspector's table and filters read them.
func BenchmarkReaderScan(b *testing.B) {
	const records = 200_000
	w := createTest(b, WriterOptions{NoFeed: true, NoSync: true})
	var chunk []byte
	for i := 0; i < 320; i++ {
		chunk = append(chunk, line200(i)...)
	}
	feedPaced(w, StreamAgent, chunk, records/320)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	r := openTest(b, w.Path())
	b.ResetTimer()
	start := time.Now()
	var n int
	for i := 0; i < b.N; i++ {
		r.Scan(1, func(*Record) bool { n++; return true })
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "records/s")
}
