package capture

import (
	"bytes"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/wire"
)

// TestLineBuffers: a line up to mappedLineBytes is ordinary memory; a
// larger one gets a mapping, whole huge pages long, that comes back for
// the next line it fits once given back; one too small is replaced, and
// no more than spareLines wait.
func TestLineBuffers(t *testing.T) {
	lb := newLineBuffers()
	defer lb.drop()
	small := lb.alloc(100)
	if cap(small) != 100 || lb.take(small[:1]) != nil {
		t.Fatalf("a 100-byte line: cap %d, or taken as a mapping", cap(small))
	}
	n := mappedLineBytes + 1
	line := append(lb.alloc(n), bytes.Repeat([]byte("a"), n)...)
	if cap(line) != n {
		t.Fatalf("cap %d, want %d", cap(line), n)
	}
	m := lb.take(line)
	if m == nil || unsafe.SliceData(m) != unsafe.SliceData(line) || len(m)%hugePage != 0 || len(m) < n {
		t.Fatalf("mapping of %d bytes for a %d-byte line", len(m), n)
	}
	if lb.take(line) != nil {
		t.Fatal("a mapping was handed over twice")
	}
	lb.giveBack(m)
	again := lb.alloc(n + 10)
	if unsafe.SliceData(again) != unsafe.SliceData(m) || lb.made.Load() != 1 {
		t.Fatalf("a line that fits a spare mapping got new memory (%d made)", lb.made.Load())
	}
	again = append(again, bytes.Repeat([]byte("b"), n+10)...) // writable again after MADV_FREE
	lb.giveBack(lb.take(again))
	bigger := lb.alloc(len(m) + 1)
	if unsafe.SliceData(bigger) == unsafe.SliceData(m) || lb.made.Load() != 2 || len(lb.spare) != 0 {
		t.Fatalf("a line larger than the spare mapping: reused %v, %d made, %d spare",
			unsafe.SliceData(bigger) == unsafe.SliceData(m), lb.made.Load(), len(lb.spare))
	}
	lb.giveBack(lb.take(bigger))
	for range spareLines + 1 {
		lb.giveBack(lb.take(lb.alloc(n + len(m)))) // each finds the spare too small
		lb.giveBack(lb.take(lb.alloc(n)))
	}
	if len(lb.spare) > spareLines {
		t.Errorf("%d mappings kept, want at most %d", len(lb.spare), spareLines)
	}
	lb.drop()
	if len(lb.spare) != 0 {
		t.Errorf("%d mappings left after drop", len(lb.spare))
	}
}

// TestHugeLinesReuseMemory records huge lines of growing and shrinking
// sizes on two streams at once, each committed before the next begins
// on its stream, and reads every one back byte for byte: memory reused
// for a later line must never show through in an earlier one.
func TestHugeLinesReuseMemory(t *testing.T) {
	sizes := []int{5 << 20, 9 << 20, 6 << 20, 9<<20 - 1, 12 << 20}
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true, CommitEvery: 5 * time.Millisecond})
	want := map[Stream][][]byte{}
	for i, size := range sizes {
		for j, s := range []Stream{StreamClient, StreamAgent} {
			fill := byte('a' + (2*i+j)%26)
			want[s] = append(want[s], bytes.Repeat([]byte{fill}, size))
		}
		for off := 0; off < sizes[i]; off += 64 << 10 {
			for _, s := range []Stream{StreamClient, StreamAgent} {
				chunk := want[s][i][off:min(off+64<<10, sizes[i])]
				waitForQueueRoom(t, w)
				w.Chunk(0, s, time.Now().UnixNano(), bytes.Clone(chunk))
			}
		}
		for _, s := range []Stream{StreamClient, StreamAgent} {
			w.Chunk(0, s, time.Now().UnixNano(), []byte("\n"))
		}
		waitCommitted(t, w, uint64(2*(i+1)))
		waitSpare(t, w)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if l := w.Stats().Loss; l.Messages != 0 {
		t.Fatalf("lost %+v: the test needs everything recorded", l)
	}
	// The tap assembles each line (tap_long.go): the first pair makes
	// a mapping each, and every later line takes a spare one and grows
	// it where it is too small.
	if w.lines.made.Load() != 2 {
		t.Errorf("%d mappings made for %d lines, want 2", w.lines.made.Load(), 2*len(sizes))
	}
	got := streamBodies(t, openTest(t, w.Path()))
	for s, lines := range want {
		if len(got[s]) != len(lines) {
			t.Fatalf("stream %v: %d lines recorded, want %d", s, len(got[s]), len(lines))
		}
		for i := range lines {
			if !bytes.Equal(got[s][i], lines[i]) {
				t.Errorf("stream %v line %d: %d bytes recorded, want %d; first difference at %d",
					s, i, len(got[s][i]), len(lines[i]), testkit.FirstDiff(got[s][i], lines[i]))
			}
		}
	}
}

// TestHugeLinesHeldUntilCommitted: huge lines that wait for one commit
// each keep memory of their own, though the framer has long finished
// with the ones before, and all are recorded exactly.
func TestHugeLinesHeldUntilCommitted(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true, CommitEvery: time.Minute, CommitBytes: 1 << 30})
	var want [][]byte
	for i := range 4 {
		line := bytes.Repeat([]byte{byte('p' + i)}, 6<<20)
		want = append(want, line)
		for off := 0; off < len(line); off += 64 << 10 {
			w.Chunk(0, StreamAgent, time.Now().UnixNano(), bytes.Clone(line[off:off+64<<10]))
		}
		w.Chunk(0, StreamAgent, time.Now().UnixNano(), []byte("\n"))
		waitRecords(t, w, uint64(i+1))
	}
	if c := w.Stats().Committed; c != 0 {
		t.Fatalf("%d records committed before Close: the lines must wait in one group", c)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if l := w.Stats().Loss; l.Messages != 0 {
		t.Fatalf("lost %+v: the test needs everything recorded", l)
	}
	if int(w.lines.made.Load()) != len(want) {
		t.Errorf("%d mappings made for %d lines held at once, want one each", w.lines.made.Load(), len(want))
	}
	r := openTest(t, w.Path())
	for i, line := range want {
		body, err := r.Body(uint64(i + 1))
		if err != nil || !bytes.Equal(body, line) {
			t.Errorf("line %d: %d bytes recorded (%v), want %d of %q; first difference at %d",
				i, len(body), err, len(line), line[0], testkit.FirstDiff(body, line))
		}
	}
}

// TestUnfinishedHugeLineAtClose: a huge line still open when the writer
// closes is recorded as partial, and its mapping is given back with it.
func TestUnfinishedHugeLineAtClose(t *testing.T) {
	for _, end := range []bool{false, true} {
		w := createTest(t, WriterOptions{NoFeed: true, NoSync: true})
		line := bytes.Repeat([]byte("u"), 5<<20)
		for off := 0; off < len(line); off += 64 << 10 {
			w.Chunk(0, StreamAgent, time.Now().UnixNano(), bytes.Clone(line[off:off+64<<10]))
		}
		if end { // the stream ends first, else Close finds the line open
			w.EndStream(0, StreamAgent, time.Now().UnixNano())
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if n := len(w.lines.mapped); n != 0 {
			t.Errorf("stream ended %v: %d mappings never given back", end, n)
		}
		r := openTest(t, w.Path())
		rec, err := r.Record(1)
		if err != nil || rec.Flags&wire.FlagPartial == 0 {
			t.Errorf("stream ended %v: record %+v (%v), want it partial", end, rec, err)
		}
		if body, err := r.Body(1); err != nil || !bytes.Equal(body, line) {
			t.Errorf("stream ended %v: %d bytes recorded (%v), want %d", end, len(body), err, len(line))
		}
	}
}

// waitRecords waits until the builder has framed n records.
func waitRecords(t *testing.T, w *Writer, n uint64) {
	t.Helper()
	waitUntil(t, func() bool { return w.Stats().Records >= n },
		func() string { return fmt.Sprintf("%d records framed, want %d", w.Stats().Records, n) })
}

// waitSpare waits until the committer has given both lines' mappings back.
func waitSpare(t *testing.T, w *Writer) {
	t.Helper()
	waitUntil(t, func() bool { return len(w.lines.spare) == spareLines },
		func() string { return fmt.Sprintf("%d spare mappings, want %d", len(w.lines.spare), spareLines) })
}

// mappingsInUse counts the mappings lines has made and not unmapped.
func mappingsInUse(lb *lineBuffers) int { return int(lb.live.Load()) }
