package capture

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// TestOverflowAccounting makes the writer slow on purpose and checks that
// every frame is either recorded intact or counted lost, that Warn speaks
// and that the loss lands in the file. (TestTapNeverBlocks checks the tap
// does not wait for the writer.) Without a spool, so the queue overflows
// (spool_test.go has the writer catch up through one).
func TestOverflowAccounting(t *testing.T) {
	var ws warnings
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, Warn: ws.warn, SpoolBytes: -1,
		CommitDelay: 30 * time.Millisecond, QueueChunks: 16, QueueBytes: 8 << 10, CommitRecords: 100})
	var stream []byte
	var lines []string
	for i := 0; i < 4000; i++ {
		l := fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i)
		lines = append(lines, l)
		stream = append(stream, l+"\n"...)
	}
	rng := rand.New(rand.NewSource(1))
	for off, burst := 0, 0; off < len(stream); burst++ {
		for k := 0; k < 200 && off < len(stream); k++ {
			n := min(len(stream)-off, 20+rng.Intn(300))
			w.Chunk(0, StreamAgent, int64(off), stream[off:off+n])
			off += n
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.Frame(1, wire.DirClient, 1, []byte(lines[0]), 0, nil) // may or may not fit: counted either way
	w.EndStream(0, StreamAgent, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	r := openTest(t, w.Path())
	intact, next := 0, 0
	err := r.Scan(1, func(rec *Record) bool {
		if rec.Conn == 1 {
			intact++ // the Frame
			return true
		}
		body, err := r.Body(rec.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Flags&(wire.FlagTruncated|wire.FlagPartial) != 0 {
			return true
		}
		for next < len(lines) && lines[next] != string(body) {
			next++
		}
		if next == len(lines) {
			t.Fatalf("record %d (%q) is not an intact line, or out of order", rec.Seq, body)
		}
		intact++
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := int64(len(lines) + 1)
	if st.Loss.Messages == 0 {
		t.Fatal("nothing was lost: the test did not overflow the queue")
	}
	if int64(intact)+st.Loss.Messages != sent {
		t.Errorf("%d intact + %d lost = %d, want %d frames sent", intact, st.Loss.Messages, int64(intact)+st.Loss.Messages, sent)
	}
	if st.Loss.Bytes <= 0 || st.Loss.Bytes > int64(len(stream)+len(lines[0])) || st.Loss.Bursts < 1 {
		t.Errorf("loss = %+v", st.Loss)
	}
	if m := r.Meta(); m.Loss != st.Loss {
		t.Errorf("stored loss %+v, writer says %+v", m.Loss, st.Loss)
	}
	warned := ws.all()
	if len(warned) == 0 || !strings.Contains(warned[0], "lost") || !strings.Contains(warned[0], "forwarding continues") {
		t.Errorf("warnings = %q", warned)
	}
	for _, line := range warned {
		if strings.HasPrefix(line, "acpscope") {
			t.Errorf("warning %q carries a program prefix; the caller adds its own", line)
		}
	}
	if int64(len(warned)) > st.Loss.Bursts+1 {
		t.Errorf("%d warnings for %d bursts", len(warned), st.Loss.Bursts)
	}
}

// TestTapNeverBlocks: with the writer stalled (a disk that stopped), the
// tap still returns at once for every chunk, counting what does not fit
// as lost, so the wire never waits for capture. A tap that waited for the
// writer would hang here until the wait below gives up.
func TestTapNeverBlocks(t *testing.T) {
	gate := make(chan struct{})
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, commitGate: gate, SpoolBytes: -1,
		QueueChunks: 16, QueueBytes: 8 << 10, CommitRecords: 10})
	const sent = 2000
	tapped := make(chan struct{})
	go func() { // the forwarding side
		defer close(tapped)
		for i := 0; i < sent; i++ {
			w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
		}
	}()
	select {
	case <-tapped:
	case <-time.After(waitLimit):
		t.Fatalf("%d chunks not tapped within %v while the writer was stalled: the tap waits for the writer", sent, waitLimit)
	}
	close(gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Loss.Messages == 0 || st.Committed+uint64(st.Loss.Messages) != sent {
		t.Errorf("%d committed + %d lost, want %d sent and some loss: %+v", st.Committed, st.Loss.Messages, sent, st.Loss)
	}
}

func TestWriteFailure(t *testing.T) {
	tests := []struct {
		name   string
		opts   WriterOptions
		break_ func(path string)
		words  string
	}{
		{"file removed", WriterOptions{}, func(path string) { os.Remove(path) }, "removed"},
		{"disk full", WriterOptions{maxFileSize: 256 << 10}, func(string) {}, "maximum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ws warnings
			opts := tt.opts
			opts.NoSync, opts.NoFeed, opts.Warn, opts.CommitEvery = true, true, ws.warn, 5*time.Millisecond
			w := createTest(t, opts)
			w.Chunk(0, StreamClient, 1, []byte(notif(0)+"\n"))
			waitCommitted(t, w, 1)
			tt.break_(w.Path())
			big := bytes.Repeat([]byte("y"), 64<<10)
			big[len(big)-1] = '\n'
			for i := 0; i < 16; i++ {
				w.Chunk(0, StreamAgent, int64(i), big)
				time.Sleep(2 * time.Millisecond)
			}
			w.Close()
			st := w.Stats()
			if st.Loss.WriteErrors == 0 || st.Loss.Messages == 0 || st.Loss.LastError == "" {
				t.Fatalf("loss = %+v", st.Loss)
			}
			if st.Committed+uint64(st.Loss.Messages) != 17 {
				t.Errorf("%d committed + %d lost != 17 sent", st.Committed, st.Loss.Messages)
			}
			warned := strings.Join(ws.all(), "\n")
			if !strings.Contains(warned, tt.words) || !strings.Contains(warned, "forwarding continues") {
				t.Errorf("warnings = %q", warned)
			}
			if fileExists(w.Path()) {
				r := openTest(t, w.Path())
				if n := len(readAll(t, r)); uint64(n) != st.Committed {
					t.Errorf("file holds %d records, writer committed %d", n, st.Committed)
				}
			}
		})
	}
}

// TestRemovedFileWarnsOnce: a capture file removed while recording fails
// every commit after; that is said once, the loss is still counted, and
// Close sums it up. (It once printed a warning per commit: 61 in 3 s.)
func TestRemovedFileWarnsOnce(t *testing.T) {
	var ws warnings
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, Warn: ws.warn, CommitEvery: 5 * time.Millisecond})
	w.Chunk(0, StreamClient, 1, []byte(notif(0)+"\n"))
	waitCommitted(t, w, 1)
	os.Remove(w.Path())
	sent := int64(0)
	deadline := time.Now().Add(waitLimit)
	for w.Stats().Loss.WriteErrors < 10 { // many commits fail
		if time.Now().After(deadline) {
			t.Fatalf("%d failed writes in %v, want 10: %+v", w.Stats().Loss.WriteErrors, waitLimit, w.Stats().Loss)
		}
		w.Chunk(0, StreamAgent, sent+2, []byte(notif(int(sent)+1)+"\n"))
		sent++
		time.Sleep(2 * time.Millisecond)
	}
	running := ws.all()
	w.Close()
	st := w.Stats()
	if len(running) != 1 || !strings.Contains(running[0], "removed") || !strings.Contains(running[0], "nothing more will be recorded") {
		t.Errorf("%d warnings while recording, want one saying the file was removed: %q", len(running), running)
	}
	if st.Loss.Messages != sent || st.Loss.Bursts != 1 {
		t.Errorf("loss %+v, want %d messages in 1 burst", st.Loss, sent)
	}
	all := ws.all()
	want := fmt.Sprintf("lost %d messages", sent)
	if len(all) != 2 || !strings.Contains(all[1], want) || !strings.Contains(all[1], "in 1 burst,") {
		t.Errorf("warnings %q: want one more at Close saying %q in 1 burst", all, want)
	}
}

func TestCreateReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	_, err := Create(filepath.Join(dir, "x.acpscope"), WriterOptions{NoFeed: true})
	if err == nil || !strings.Contains(err.Error(), "x.acpscope") {
		t.Errorf("Create in a read-only dir = %v", err)
	}
}

func waitCommitted(t *testing.T, w *Writer, n uint64) {
	t.Helper()
	waitUntil(t, func() bool { return w.Stats().Committed >= n },
		func() string { return fmt.Sprintf("committed %d, want %d", w.Stats().Committed, n) })
}

// TestTapFreshMemoryBound: with the writer stalled and a queue that
// would take a gigabyte, the tap drops and counts large chunks once
// freshQueueBytes are queued and the recycled buffers are used up, and
// once the writer moves again everything accepted is committed.
func TestTapFreshMemoryBound(t *testing.T) {
	gate := make(chan struct{})
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, commitGate: gate, SpoolBytes: -1, QueueBytes: 1 << 30, QueueChunks: 1 << 16})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release) // before the writer's Close, which would wait for the gate
	line := append(bytes.Repeat([]byte("z"), 1023), '\n')
	chunk := bytes.Repeat(line, 64) // 64 KiB, a pipe's worth
	sent, queuedAtDrop := 0, int64(-1)
	for range (256 << 20) / len(chunk) { // far more than the bound and the recycled buffers
		w.Chunk(0, StreamAgent, int64(sent), chunk)
		sent++
		if st := w.Stats(); st.Loss.Messages > 0 {
			queuedAtDrop = st.Queued
			break
		}
	}
	if queuedAtDrop < 0 {
		t.Fatalf("%d chunks of 64 KiB copied with the writer stalled and none dropped: fresh copies are not bounded", sent)
	}
	if queuedAtDrop < freshQueueBytes {
		t.Errorf("the first drop came with %d bytes queued, under the bound of %d", queuedAtDrop, freshQueueBytes)
	}
	release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if lines := uint64(sent * 64); st.Committed+uint64(st.Loss.Messages) != lines || st.Loss.Messages != 64 {
		t.Errorf("%d committed + %d lost, want %d sent and one chunk (64 lines) lost", st.Committed, st.Loss.Messages, lines)
	}
}

// TestOfferPastFreshBound: what the tap accepts once more than
// freshQueueBytes is queued, on the tap alone (no writer goroutines to
// give buffers back at a moment of their choosing).
func TestOfferPastFreshBound(t *testing.T) {
	big := bytes.Repeat([]byte("b"), 64<<10)
	tests := []struct {
		name   string
		queued int64
		free   bool // a recycled buffer of big's size waits
		it     item
		src    []byte
		want   bool
	}{
		{"under the bound, fresh memory", freshQueueBytes - int64(len(big)), false, item{kind: itemChunk}, big, true},
		{"past the bound, no recycled buffer", freshQueueBytes + 1, false, item{kind: itemChunk}, big, false},
		{"past the bound, a recycled buffer", freshQueueBytes + 1, true, item{kind: itemChunk}, big, true},
		{"past the bound, a frame without one", freshQueueBytes + 1, false, item{kind: itemFrame}, big, false},
		{"past the bound, a small frame", freshQueueBytes + 1, false, item{kind: itemFrame}, []byte(`{"jsonrpc":"2.0"}`), true},
		{"past the bound, handed over whole", freshQueueBytes + 1, false, item{kind: itemFrame, data: big}, big, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := &tap{queue: make(chan item, 1), limit: 1 << 30}
			tp.queued.Store(tt.queued)
			if tt.free {
				tp.buffers.release(make([]byte, 0, 64<<10))
			}
			if got := tp.offer(tt.it, tt.src); got != tt.want {
				t.Fatalf("offer = %v, want %v", got, tt.want)
			}
			if !tt.want {
				if q := tp.queued.Load(); q != tt.queued {
					t.Errorf("queued %d after a refusal, want %d as before", q, tt.queued)
				}
				return
			}
			if got := (<-tp.queue).data; !bytes.Equal(got, tt.src) {
				t.Errorf("queued %d bytes, want a copy of the %d offered", len(got), len(tt.src))
			}
		})
	}
}
