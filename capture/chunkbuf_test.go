package capture

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/wire"
)

func TestChunkBufferClasses(t *testing.T) {
	var cb chunkBuffers
	for _, tt := range []struct {
		n, class int
	}{
		{0, -1}, {200, -1}, {8<<10 - 1, -1}, {8 << 10, 0}, {16 << 10, 0}, {16<<10 + 1, 1}, {32 << 10, 1},
		{32<<10 + 1, 2}, {64 << 10, 2}, {64<<10 + 1, 3}, {128 << 10, 3}, {200 << 10, 4}, {256 << 10, 4},
		{256<<10 + 1, -1}, {10 << 20, -1},
	} {
		if got := cb.class(tt.n); got != tt.class {
			t.Errorf("class(%d) = %d, want %d", tt.n, got, tt.class)
		}
	}
}

// TestChunkBuffersReuse: a released buffer is the next one handed out for
// its class, last in first out, copies hold exactly the source, and no more than
// keptBytes bytes, all sizes together, wait for reuse.
func TestChunkBuffersReuse(t *testing.T) {
	var cb chunkBuffers
	src := bytes.Repeat([]byte("abcdefgh"), 100<<10/8)
	a := cb.copyOf(cb.class(len(src)), src)
	if !bytes.Equal(a, src) || cap(a) != 128<<10 {
		t.Fatalf("copy of %d bytes: equal %v, cap %d", len(src), bytes.Equal(a, src), cap(a))
	}
	cb.release(a)
	b := cb.copyOf(cb.class(90<<10), src[:90<<10])
	if &b[0] != &a[0] || !bytes.Equal(b, src[:90<<10]) {
		t.Errorf("a released buffer was not reused, or the copy differs")
	}
	c := cb.copyOf(cb.class(90<<10), src[:90<<10])
	cb.release(b)
	cb.release(c)
	d := cb.copyOf(cb.class(90<<10), src[:90<<10])
	e := cb.copyOf(cb.class(90<<10), src[:90<<10])
	if &d[0] != &c[0] || &e[0] != &b[0] {
		t.Errorf("buffers not handed out last given back first (the cache's warmest)")
	}
	small := cb.copyOf(cb.class(100), src[:100])
	cb.release(small) // not a pooled size: ignored
	got := 0
	for i := range cb.free {
		got += cb.free[i].len()
	}
	if got != 0 {
		t.Errorf("%d buffers kept after releasing an unpooled one", got)
	}
	for i := 0; i < keptBytes/(256<<10); i++ {
		cb.release(make([]byte, 0, 256<<10)) // past the bound: dropped, never blocking
		cb.release(make([]byte, 0, 16<<10))
		cb.release(make([]byte, 0, 64<<10))
	}
	held := 0
	for i := range cb.free {
		held += cb.free[i].len() * chunkClasses[i]
	}
	if held > keptBytes || held != int(cb.kept.Load()) || held < keptBytes-256<<10 {
		t.Errorf("%d bytes kept (counted %d), want the pool full to within one buffer of %d", held, cb.kept.Load(), keptBytes)
	}
}

// TestFramesGiveBuffersBack: an HTTP frame copied into a pooled buffer
// gives it back once the builder has copied it into a segment, and is
// recorded exactly even when its source is scribbled over at once.
func TestFramesGiveBuffersBack(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true})
	class := w.tap.buffers.class(100 << 10)
	w.tap.buffers.release(make([]byte, 0, chunkClasses[class]))
	src := bytes.Repeat([]byte("f"), 100<<10)
	w.Frame(0, wire.DirClient, 1, src, 0, &wire.Envelope{Method: "POST", Stream: wire.StreamPOST})
	clear(src)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := w.tap.buffers.free[class].len(); n != 1 {
		t.Errorf("%d buffers of %d KiB kept after a 100 KiB frame, want the 1 it took back", n, chunkClasses[class]>>10)
	}
	r, err := Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if body, err := r.Body(1); err != nil || !bytes.Equal(body, bytes.Repeat([]byte("f"), 100<<10)) {
		t.Errorf("the frame was recorded as %d bytes (%v), want 100 KiB of f", len(body), err)
	}
}

// TestPooledChunksRecordExactly feeds three streams in chunks of the
// pooled sizes, scribbling over each source buffer as soon as Chunk
// returns (as the pump reuses its buffer), and reads every stream back
// byte for byte: lines within a chunk, lines spanning chunks, and lines
// larger than a segment.
func TestPooledChunksRecordExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	streams := []Stream{StreamClient, StreamAgent, StreamStderr}
	want := make(map[Stream][]byte)
	for _, s := range streams {
		var b []byte
		for i := 0; i < 300; i++ {
			size := 1 + rng.IntN(3000)
			if i%50 == 7 {
				size = 300<<10 + rng.IntN(100<<10) // larger than a segment
			}
			b = append(b, bytes.Repeat([]byte{byte('a' + i%26)}, size)...)
			b = append(b, '\n')
		}
		want[s] = b
	}
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true, QueueBytes: 1 << 30})
	pos := map[Stream]int{}
	for done := 0; done < len(streams); {
		done = 0
		for _, s := range streams {
			src := want[s][pos[s]:]
			if len(src) == 0 {
				done++
				continue
			}
			n := min(len(src), 32<<10+rng.IntN(224<<10))
			buf := append([]byte(nil), src[:n]...)
			w.Chunk(0, s, time.Now().UnixNano(), buf)
			for i := range buf {
				buf[i] = 'Z'
			}
			pos[s] += n
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if l := w.Stats().Loss; l.Messages != 0 {
		t.Fatalf("lost %+v: the test needs everything recorded", l)
	}
	bodies := streamBodies(t, openTest(t, w.Path()))
	for _, s := range streams {
		got := append(bytes.Join(bodies[s], []byte("\n")), '\n')
		if !bytes.Equal(got, want[s]) {
			t.Errorf("stream %v: recorded %d bytes, sent %d; first difference at %d", s, len(got), len(want[s]), testkit.FirstDiff(got, want[s]))
		}
	}
}

// TestTakeFrameKeepsTheBody: a body handed over with TakeFrame is
// recorded as it was, small or larger than a segment, and an empty one
// is still a message.
func TestTakeFrameKeepsTheBody(t *testing.T) {
	path := tempCapture(t)
	w, err := Create(path, WriterOptions{NoFeed: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"x"}`),
		append(append([]byte(`{"jsonrpc":"2.0","method":"big","params":"`), bytes.Repeat([]byte("b"), 300<<10)...), `"}`...),
		nil,
	}
	for _, b := range bodies {
		w.TakeFrame(1, wire.DirClient, 1, b, 0, &wire.Envelope{Method: "POST", Stream: wire.StreamPOST})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, openTest(t, path))
	if len(recs) != len(bodies) {
		t.Fatalf("%d records, want %d", len(recs), len(bodies))
	}
	for i, b := range bodies {
		if !bytes.Equal(recs[i].Body, b) {
			t.Errorf("record %d: %d bytes, want %d", i, len(recs[i].Body), len(b))
		}
	}
}

// TestSlabCuts: fresh buffers of a class are cut one after another from
// a slab, each exactly its class long, so writing one never touches its
// neighbour; a used-up slab is replaced, and cuts from many goroutines
// at once never overlap.
func TestSlabCuts(t *testing.T) {
	var s slab
	const n = 64 << 10
	a := append(s.cut(n), bytes.Repeat([]byte("a"), n)...)
	b := append(s.cut(n), bytes.Repeat([]byte("b"), n)...)
	if cap(a) != n || cap(b) != n {
		t.Fatalf("caps %d and %d, want %d", cap(a), cap(b), n)
	}
	if unsafe.Pointer(&b[0]) != unsafe.Add(unsafe.Pointer(&a[0]), n) || bytes.Count(a, []byte("a")) != n {
		t.Fatal("the second buffer is not cut right after the first, or overlaps it")
	}
	for range slabBytes/n - 2 {
		s.cut(n)
	}
	if cap(s.free) != 0 {
		t.Fatalf("%d bytes left after cutting the whole slab", cap(s.free))
	}
	if c := s.cut(n); cap(c) != n || cap(s.free) != slabBytes-n {
		t.Fatalf("after a used-up slab: cap %d with %d left, want a new slab", cap(c), cap(s.free))
	}

	var shared slab
	got := make(chan []byte, 256)
	for g := range 8 {
		go func() {
			for range 32 {
				got <- append(shared.cut(16<<10), bytes.Repeat([]byte{byte(g)}, 16<<10)...)
			}
		}()
	}
	seen := map[*byte]bool{}
	var bufs [][]byte
	for range 256 {
		c := <-got
		if seen[&c[0]] {
			t.Fatal("two goroutines were given the same buffer")
		}
		seen[&c[0]] = true
		bufs = append(bufs, c)
	}
	for _, c := range bufs {
		if bytes.Count(c, c[:1]) != len(c) {
			t.Fatal("a buffer was written by two goroutines")
		}
	}
}
