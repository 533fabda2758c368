package capture

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/wire"
)

// longRecord is what a test expects recorded of one stream's line.
type longRecord struct {
	stream Stream
	body   []byte
	flags  wire.Flags // FlagPartial, FlagTruncated
}

// sendInChunks hands b to the tap in chunks of 64 KiB, each once the
// builder has taken everything before it, so that nothing is dropped and
// capture is idle when a line grows long.
func sendInChunks(t *testing.T, w *Writer, s Stream, b []byte) {
	t.Helper()
	for off := 0; off < len(b); off += 64 << 10 {
		waitUntil(t, func() bool { return len(w.tap.queue) == 0 && w.tap.queued.Load() == 0 },
			func() string { return fmt.Sprintf("%d items, %d bytes queued", len(w.tap.queue), w.tap.queued.Load()) })
		w.Chunk(0, s, time.Now().UnixNano(), bytes.Clone(b[off:min(off+64<<10, len(b))]))
	}
}

// TestLongLines: lines past longLineStart, which the tap assembles itself
// (on Linux), are recorded byte for byte however they end: with lines
// after them in the chunk that ends them, with the stream, with Close,
// on stderr.
func TestLongLines(t *testing.T) {
	long := func(n int, fill byte) []byte {
		b := bytes.Repeat([]byte{fill}, n)
		copy(b, `{"jsonrpc":"2.0","method":"big","params":{"x":"`)
		copy(b[n-3:], `"}}`)
		return b
	}
	nine, six := long(9<<20+12345, 'n'), long(6<<20, 's')
	short := []byte(notif(1))
	tests := []struct {
		name string
		send func(t *testing.T, w *Writer)
		want []longRecord
	}{
		{"lines after it in the chunk that ends it", func(t *testing.T, w *Writer) {
			sendInChunks(t, w, StreamAgent, nine[:len(nine)-100])
			end := append(append(bytes.Clone(nine[len(nine)-100:]), '\n'), short...)
			w.Chunk(0, StreamAgent, time.Now().UnixNano(), append(end, '\n'))
			sendInChunks(t, w, StreamAgent, append(bytes.Clone(six), '\n'))
		}, []longRecord{{StreamAgent, nine, 0}, {StreamAgent, short, 0}, {StreamAgent, six, 0}}},
		{"the stream ends inside it", func(t *testing.T, w *Writer) {
			sendInChunks(t, w, StreamClient, nine)
			w.EndStream(0, StreamClient, time.Now().UnixNano())
		}, []longRecord{{StreamClient, nine, wire.FlagPartial}}},
		{"Close comes inside it", func(t *testing.T, w *Writer) {
			sendInChunks(t, w, StreamAgent, append(append(bytes.Clone(short), '\n'), six...))
		}, []longRecord{{StreamAgent, short, 0}, {StreamAgent, six, wire.FlagPartial}}},
		{"on stderr, beside a stream of its own", func(t *testing.T, w *Writer) {
			sendInChunks(t, w, StreamStderr, six[:5<<20])
			sendInChunks(t, w, StreamAgent, append(bytes.Clone(short), '\n'))
			sendInChunks(t, w, StreamStderr, append(bytes.Clone(six[5<<20:]), '\n'))
		}, []longRecord{{StreamAgent, short, 0}, {StreamStderr, six, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := createTest(t, WriterOptions{NoFeed: true, NoSync: true})
			tt.send(t, w)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if l := w.Stats().Loss; l.Messages != 0 || l.Bytes != 0 {
				t.Fatalf("lost %+v: the test needs everything recorded", l)
			}
			if q := w.Stats().Queued; q != 0 { // a long line is outside the byte count both ways
				t.Errorf("%d bytes still counted as queued after Close", q)
			}
			assertRecorded(t, openTest(t, w.Path()), tt.want)
		})
	}
}

// assertRecorded checks a capture holds exactly want, in order.
func assertRecorded(t *testing.T, r *Reader, want []longRecord) {
	t.Helper()
	if r.Last() != uint64(len(want)) {
		t.Fatalf("%d records, want %d", r.Last(), len(want))
	}
	for i, w := range want {
		seq := uint64(i + 1)
		rec, body := recordAndBody(t, r, seq)
		if s := recordStream(&rec); s != w.stream || !bytes.Equal(body, w.body) || rec.Flags&(wire.FlagPartial|wire.FlagTruncated) != w.flags {
			t.Errorf("#%d: stream %v, %d bytes, flags %v; want stream %v, %d bytes, flags %v; first difference at %d",
				seq, s, len(body), rec.Flags, w.stream, len(w.body), w.flags, testkit.FirstDiff(body, w.body))
		}
	}
}

// gatedWriter is a writer whose committer waits until openGate is
// called, with a small queue, no spool and a commit for every record.
func gatedWriter(t *testing.T) (w *Writer, openGate func()) {
	t.Helper()
	gate := make(chan struct{})
	w = createTest(t, WriterOptions{NoSync: true, NoFeed: true, commitGate: gate, SpoolBytes: -1,
		QueueChunks: 8, CommitRecords: 1})
	openGate = sync.OnceFunc(func() { close(gate) })
	t.Cleanup(openGate) // before Close, which waits for the committer
	return w, openGate
}

// stallBuilder fills the commits waiting and the tap's queue behind a
// committer held at its gate, with short lines on the client stream (a
// group each), until the builder holds a group it cannot hand over and
// the queue stays full; a last line is then dropped. It returns how many
// lines it sent.
func stallBuilder(t *testing.T, w *Writer) int {
	t.Helper()
	sent := 0
	send := func() {
		w.Chunk(0, StreamClient, time.Now().UnixNano(), []byte(notif(sent)+"\n"))
		sent++
	}
	full := func() bool { return len(w.commits) == cap(w.commits) && len(w.tap.queue) == cap(w.tap.queue) }
	deadline := time.Now().Add(waitLimit)
	for stable := 0; stable < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d lines sent with the committer held, and the builder still takes them", sent)
		}
		for !full() && time.Now().Before(deadline) {
			send()
			time.Sleep(time.Millisecond) // the builder takes what it can
		}
		records := w.Stats().Records
		time.Sleep(100 * time.Millisecond) // a builder not yet stuck takes one more
		if full() && w.Stats().Records == records {
			stable++
		} else {
			stable = 0
		}
	}
	lost := w.Stats().Loss.Messages
	send()
	if w.Stats().Loss.Messages == lost {
		t.Fatal("a line sent into a full queue was not dropped")
	}
	return sent
}

// TestLongLineDroppedAtItsEnd: when a long line ends while the queue is
// full, the tap drops it and counts it; the part the builder holds is
// recorded as a truncated frame, the memory is given back, and every
// line sent is either recorded intact or counted lost.
func TestLongLineDroppedAtItsEnd(t *testing.T) {
	w, openGate := gatedWriter(t)
	line := bytes.Repeat([]byte{'L'}, 6<<20)
	sendInChunks(t, w, StreamAgent, line)
	if runtime.GOOS == "linux" && len(w.tap.stream(0, StreamAgent).long) == 0 {
		t.Fatal("a line of 6 MiB sent to an idle capture is not the tap's")
	}
	short := stallBuilder(t, w)
	lostBefore := w.Stats().Loss.Messages
	w.Chunk(0, StreamAgent, time.Now().UnixNano(), []byte("\n"))
	if lost := w.Stats().Loss.Messages - lostBefore; lost != 1 {
		t.Fatalf("%d more messages counted lost for the long line's end in a full queue, want 1", lost)
	}
	openGate()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	assertLostOrIntact(t, w, short+1, func(body []byte) bool { return bytes.Equal(body, line) })
	assertNoMappingsInUse(t, w)
}

// TestLongLineLostBeforeItWasLong: a line that lost a chunk before it
// grew long stays with the builder, which skips the rest of it; the line
// is counted lost, and the tap does not assemble it.
func TestLongLineLostBeforeItWasLong(t *testing.T) {
	w, openGate := gatedWriter(t)
	short := stallBuilder(t, w)
	w.Chunk(0, StreamAgent, time.Now().UnixNano(), []byte(`{"jsonrpc":"2.0","method":"long","params":"`))
	for range 8 { // the queue is full: these are dropped
		w.Chunk(0, StreamAgent, time.Now().UnixNano(), bytes.Repeat([]byte{'x'}, 64<<10))
	}
	openGate()
	rest := append(bytes.Repeat([]byte{'x'}, 6<<20), `"}`...)
	sendInChunks(t, w, StreamAgent, rest)
	if len(w.tap.stream(0, StreamAgent).long) != 0 {
		t.Error("the tap assembles a line it has lost part of")
	}
	after := []byte(notif(-1))
	sendInChunks(t, w, StreamAgent, append(append([]byte("\n"), after...), '\n'))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	intact := assertLostOrIntact(t, w, short+2, func(body []byte) bool { return bytes.HasSuffix(body, rest) })
	if !intact[string(after)] {
		t.Error("the line after the lost one is not recorded")
	}
	assertNoMappingsInUse(t, w)
}

// assertLostOrIntact checks that of sent lines, every record is an intact
// one, or a truncated frame of one, and that intact lines and lost ones
// add up to sent. isLong tells a body of the long line. It returns the
// intact bodies.
func assertLostOrIntact(t *testing.T, w *Writer, sent int, isLong func([]byte) bool) map[string]bool {
	t.Helper()
	r := openTest(t, w.Path())
	intact := map[string]bool{}
	for seq := uint64(1); seq <= r.Last(); seq++ {
		rec, body := recordAndBody(t, r, seq)
		switch {
		case rec.Flags&wire.FlagTruncated != 0: // counted lost
		case isLong(body) || bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","method":"session/update"`)):
			intact[string(body)] = true
		default:
			t.Errorf("#%d is neither a line sent nor marked truncated: %.80q", seq, body)
		}
	}
	lost := w.Stats().Loss.Messages
	if int64(len(intact))+lost != int64(sent) {
		t.Errorf("%d intact + %d lost, want the %d lines sent", len(intact), lost, sent)
	}
	return intact
}

// assertNoMappingsInUse checks that every line mapping was given back.
func assertNoMappingsInUse(t *testing.T, w *Writer) {
	t.Helper()
	if n := mappingsInUse(&w.lines); n != 0 {
		t.Errorf("%d line mappings still in use after Close", n)
	}
}

// TestLongLinesOnlyWhileIdle: while a long line waits for the builder,
// the tap leaves the next one to the chunks' path, which records it all
// the same.
func TestLongLinesOnlyWhileIdle(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true})
	line := bytes.Repeat([]byte{'i'}, 6<<20)
	w.tap.longWaiting.Add(1) // as if one waited
	sendInChunks(t, w, StreamAgent, line)
	if len(w.tap.stream(0, StreamAgent).long) != 0 {
		t.Error("the tap took a line over while another waited for the builder")
	}
	w.tap.longWaiting.Add(-1)
	sendInChunks(t, w, StreamAgent, []byte("\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	assertRecorded(t, openTest(t, w.Path()), []longRecord{{StreamAgent, line, 0}})
}
