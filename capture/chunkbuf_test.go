package capture

import (
	"bytes"
	"testing"
)

func TestChunkBufferClasses(t *testing.T) {
	var cb chunkBuffers
	for _, tt := range []struct {
		n, class int
	}{
		{0, -1}, {200, -1}, {32<<10 - 1, -1}, {32 << 10, 0}, {64 << 10, 0}, {64<<10 + 1, 1},
		{128 << 10, 1}, {200 << 10, 2}, {256 << 10, 2}, {256<<10 + 1, -1}, {10 << 20, -1},
	} {
		if got := cb.class(tt.n); got != tt.class {
			t.Errorf("class(%d) = %d, want %d", tt.n, got, tt.class)
		}
	}
}

// TestChunkBuffersReuse: a released buffer is the next one handed out for
// its class, copies hold exactly the source, and no more than
// keptPerClass bytes of a class wait for reuse.
func TestChunkBuffersReuse(t *testing.T) {
	var cb chunkBuffers
	src := bytes.Repeat([]byte("abcdefgh"), 100<<10/8)
	a := cb.copyOf(src)
	if !bytes.Equal(a, src) || cap(a) != 128<<10 {
		t.Fatalf("copy of %d bytes: equal %v, cap %d", len(src), bytes.Equal(a, src), cap(a))
	}
	cb.release(a)
	b := cb.copyOf(src[:90<<10])
	if &b[0] != &a[0] || !bytes.Equal(b, src[:90<<10]) {
		t.Errorf("a released buffer was not reused, or the copy differs")
	}
	small := cb.copyOf(src[:100])
	cb.release(small) // not a pooled size: ignored
	if got := len(cb.free[0]) + len(cb.free[1]) + len(cb.free[2]); got != 0 {
		t.Errorf("%d buffers kept after releasing an unpooled one", got)
	}
	for i := 0; i < 2*keptPerClass/(256<<10); i++ {
		cb.release(make([]byte, 0, 256<<10))
	}
	if got := len(cb.free[2]) * (256 << 10); got > keptPerClass {
		t.Errorf("%d bytes kept, limit %d", got, keptPerClass)
	}
}
