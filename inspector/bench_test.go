package inspector

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/gdamore/tcell/v2"
)

// The benchmark's capture is written by a child process (this test binary
// re-executed), so the writer's memory does not count in the inspector's
// peak RSS.
const envGenerate = "ACPSCOPE_INSPECTOR_GENERATE"

func TestMain(m *testing.M) {
	if code, ok := runRole(); ok {
		os.Exit(code)
	}
	if spec := os.Getenv(envGenerate); spec != "" {
		path, n, _ := strings.Cut(spec, ":")
		count, _ := strconv.Atoi(n)
		if err := generateCapture(path, count); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// generateCapture writes n messages shaped like a long agent session:
// mostly session/update chunks, a prompt turn every 1000 messages, tool
// calls answered by the client, some stderr and a few errors.
func generateCapture(path string, n int) error {
	w, err := capture.Create(path, capture.WriterOptions{
		NoSync: true, NoFeed: true,
		Meta: capture.Meta{Agent: "bench-agent", Transport: "stdio", Start: time.Unix(1_780_000_000, 0)},
	})
	if err != nil {
		return err
	}
	t := time.Unix(1_780_000_000, 0).UnixNano()
	var client, agent, stderr []byte
	flush := func() {
		for w.Stats().Queued > 8<<20 {
			time.Sleep(time.Millisecond)
		}
		w.Chunk(0, capture.StreamClient, t, client)
		w.Chunk(0, capture.StreamAgent, t, agent)
		w.Chunk(0, capture.StreamStderr, t, stderr)
		client, agent, stderr = client[:0:0], agent[:0:0], stderr[:0:0]
	}
	for i := 0; i < n; i++ {
		t += int64(time.Millisecond)
		turn := i / 1000
		switch i % 1000 {
		case 0:
			client = fmt.Appendf(client, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"sess_bench","prompt":[{"type":"text","text":"step %d"}]}}`+"\n", turn, turn)
		case 999:
			agent = fmt.Appendf(agent, `{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`+"\n", turn)
		case 500:
			agent = fmt.Appendf(agent, `{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":{"sessionId":"sess_bench","path":"/src/file%d.go"}}`+"\n", turn, turn)
		case 501:
			if turn%10 == 0 {
				client = fmt.Appendf(client, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32002,"message":"Resource not found"}}`+"\n", turn)
			} else {
				client = fmt.Appendf(client, `{"jsonrpc":"2.0","id":%d,"result":{"content":"package main"}}`+"\n", turn)
			}
		case 700:
			stderr = fmt.Appendf(stderr, "agent log line %d\n", i)
		default:
			agent = fmt.Appendf(agent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"word %d "}}}}`+"\n", i)
		}
		if i%2000 == 1999 {
			flush()
		}
	}
	flush()
	if err := w.Close(); err != nil {
		return err
	}
	if loss := w.Stats().Loss; loss.Messages != 0 || loss.Bytes != 0 {
		return fmt.Errorf("the writer lost %d messages (%d bytes)", loss.Messages, loss.Bytes)
	}
	return nil
}

// procStatus returns a field of /proc/self/status in bytes: VmHWM is
// the peak resident set size (file pages of the mmapped capture
// included), RssAnon the process's own memory now.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// BenchmarkMillion measures the targets of the issue on a generated
// 1,000,000-message capture: first screen (< 0.5 s), jump to the end
// (< 0.2 s), a filter over all rows with progress (< 2 s), peak RSS
// (< 200 MiB). Run it with -benchtime=1x: each iteration opens the file.
func BenchmarkMillion(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "million.acpscope")
	gen := exec.Command(os.Args[0], "-test.run=^$")
	gen.Env = append(os.Environ(), envGenerate+"="+path+":"+strconv.Itoa(n))
	gen.Stderr = os.Stderr
	start := time.Now()
	if err := gen.Run(); err != nil {
		b.Fatalf("generating the capture: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d messages, %s, in %s", n, human.Size(fi.Size()), time.Since(start).Round(time.Millisecond))
	runtime.GC()

	var first, jump, filter, textFilter, statsTime time.Duration
	var rssMeta, anonMeta, anonText, fileText int64
	progressSeen := false
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		src, err := capture.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		h := startUI(b, Options{Path: path, source: src})
		h.waitFor("#1 pretty", "1000000 msgs")
		first = time.Since(t0)

		t0 = time.Now()
		h.typeKeys("G")
		h.waitFor("#1000000 pretty")
		jump = time.Since(t0)

		filter, progressSeen = timeFilter(h, "method:session/prompt or error", "  2100 shown")
		rssMeta, anonMeta = procStatus("VmHWM"), procStatus("RssAnon")
		textFilter, _ = timeFilter(h, `"file99"`, "  11 shown")
		anonText, fileText = procStatus("RssAnon"), procStatus("RssFile")

		// Statistics of the whole capture (the filter cleared first).
		h.typeKeys("f")
		h.key(tcell.KeyCtrlU)
		h.key(tcell.KeyEnter)
		h.waitUntil("all rows", func(s string) bool { return !strings.Contains(s, "shown") })
		t0 = time.Now()
		h.typeKeys("s")
		h.waitFor("1000000 messages", "message rate")
		statsTime = time.Since(t0)
		h.stop()
	}
	b.StopTimer()
	b.ReportMetric(first.Seconds()*1000, "first-screen-ms")
	b.ReportMetric(jump.Seconds()*1000, "jump-end-ms")
	b.ReportMetric(filter.Seconds()*1000, "filter-meta-ms")
	b.ReportMetric(textFilter.Seconds()*1000, "filter-text-ms")
	b.ReportMetric(statsTime.Seconds()*1000, "stats-ms")
	b.ReportMetric(float64(rssMeta)/(1<<20), "peak-rss-meta-MiB")
	b.ReportMetric(float64(anonMeta)/(1<<20), "anon-rss-meta-MiB")
	b.ReportMetric(float64(procStatus("VmHWM"))/(1<<20), "peak-rss-MiB")
	b.ReportMetric(float64(anonText)/(1<<20), "anon-rss-MiB")
	b.ReportMetric(float64(fileText)/(1<<20), "file-rss-MiB")
	if !progressSeen {
		b.Log("no filter progress was seen on screen (the filter finished within one redraw)")
	}
}

// timeFilter applies a filter through the bar and waits for its result,
// noting whether progress was shown on the way.
func timeFilter(h *harness, expr, want string) (time.Duration, bool) {
	h.typeKeys("f")
	h.key(tcell.KeyCtrlU)
	for _, r := range expr {
		h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	t0 := time.Now()
	h.key(tcell.KeyEnter)
	progress := false
	h.waitUntil(want, func(s string) bool {
		if strings.Contains(s, "filtering…") {
			progress = true
		}
		return strings.Contains(s, want) && !strings.Contains(s, "filtering…")
	})
	return time.Since(t0), progress
}

// BenchmarkBodyFilter compares a text filter scanned by one reader with
// the same filter split across readers (scan.go), in one run.
func BenchmarkBodyFilter(b *testing.B) {
	const n = 200_000
	path := filepath.Join(b.TempDir(), "bodies.acpscope")
	gen := exec.Command(os.Args[0], "-test.run=^$")
	gen.Env = append(os.Environ(), envGenerate+"="+path+":"+strconv.Itoa(n))
	gen.Stderr = os.Stderr
	if err := gen.Run(); err != nil {
		b.Fatalf("generating the capture: %v", err)
	}
	r, err := capture.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	f, err := capture.ParseFilter(`"file99"`)
	if err != nil {
		b.Fatal(err)
	}
	j := &job{stopc: make(chan struct{}), app: &app{done: make(chan struct{})}}
	noProgress := func(done, total uint64) {}
	b.Run("one-reader", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			seqs, _, err := matchPart(j, r, f, 1, r.Last(), nil, noProgress)
			if err != nil || len(seqs) != 1 {
				b.Fatalf("%d matches, %v", len(seqs), err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
	})
	b.Run("split", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			seqs, _, err := matchRange(j, r, f, 1, r.Last(), noProgress)
			if err != nil || len(seqs) != 1 {
				b.Fatalf("%d matches, %v", len(seqs), err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
	})
}
