package acphttp

import (
	"errors"
	"io"
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
		})
	}
}
