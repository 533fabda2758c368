package acphttp

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadUpTo(t *testing.T) {
	tests := []struct {
		name        string
		size, limit int64
		oneByte     bool
		wantTooBig  bool
	}{
		{"empty", 0, 10, false, false},
		{"one byte at a time", 600, 600, true, false},
		{"one chunk exactly", firstChunk, 1 << 20, false, false},
		{"just over a chunk", firstChunk + 1, 1 << 20, false, false},
		{"many chunks", 9<<20 + 3, 16 << 20, false, false},
		{"at the limit", 4096, 4096, false, false},
		{"one over the limit", 4097, 4096, false, true},
		{"far over the limit", 64 << 20, 1 << 20, false, true},
		{"the scratch exactly", scratchSize, 1 << 20, false, false},
		{"one past the scratch", scratchSize + 1, 1 << 20, false, false},
		{"past the scratch, one byte at a time", scratchSize + 600, 1 << 20, true, false},
		{"limit at the scratch, one over", scratchSize + 1, scratchSize, false, true},
		{"limit past the scratch, one over", scratchSize + 2, scratchSize + 1, false, true},
		{"limit past the scratch, at it", scratchSize + 1, scratchSize + 1, false, false},
		{"no limit", scratchSize + 1, math.MaxInt64, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := strings.Repeat("x", int(tt.size))
			var r io.Reader = strings.NewReader(want)
			if tt.oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := readUpTo(r, tt.limit)
			switch {
			case tt.wantTooBig:
				if !errors.Is(err, ErrTooBig) || got != nil {
					t.Fatalf("%d bytes, %v; want ErrTooBig", len(got), err)
				}
			case err != nil || string(got) != want:
				t.Fatalf("%d bytes, %v; want the %d bytes sent", len(got), err, tt.size)
			case cap(got) != len(got):
				t.Fatalf("capacity %d for %d bytes: the capture would keep the spare room", cap(got), len(got))
			}
			readUpTo(strings.NewReader(strings.Repeat("y", int(tt.size))), tt.limit) // reuses the scratch
			if !tt.wantTooBig && string(got) != want {
				t.Fatal("a body read earlier changed when the next was read: it shares the scratch")
			}
		})
	}
}
