package wire

import (
	"bytes"
	"slices"
	"testing"
)

// TestFramerAlloc: a frame that spans chunks is assembled in memory from
// Alloc, asked for its exact length; a frame inside one chunk never asks.
func TestFramerAlloc(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		frames []string
		asked  []int // Alloc's n, in order
	}{
		{"inside one chunk", []string{"ab\ncd\n"}, []string{"ab", "cd"}, nil},
		{"spans two", []string{"abc", "de\n"}, []string{"abcde"}, []int{5}},
		{"spans three, then one inside", []string{"a", "bc", "d\nxy\n"}, []string{"abcd", "xy"}, []int{4}},
		{"newline alone ends it", []string{"abc", "\n"}, []string{"abc"}, []int{3}},
		{"flushed unfinished", []string{"ab", "c"}, []string{"abc"}, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []int
			given := map[*byte]bool{}
			f := Framer{Alloc: func(n int) []byte {
				asked = append(asked, n)
				b := make([]byte, 0, n)
				given[&b[:1][0]] = true
				return b
			}}
			var frames []string
			inAlloc := 0
			check := func(fr []byte) {
				frames = append(frames, string(fr))
				if len(fr) > 0 && given[&fr[0]] {
					inAlloc++
				}
			}
			for _, c := range tt.chunks {
				f.Push([]byte(c), func(fr []byte, _ bool) { check(fr) })
			}
			f.Flush(check)
			if !slices.Equal(frames, tt.frames) {
				t.Errorf("frames %q, want %q", frames, tt.frames)
			}
			if inAlloc != len(tt.asked) {
				t.Errorf("%d frames in Alloc's memory, want %d", inAlloc, len(tt.asked))
			}
			if !slices.Equal(asked, tt.asked) {
				t.Errorf("Alloc asked for %v, want %v", asked, tt.asked)
			}
		})
	}
}

// TestFramerAllocReleasesChunks: with Alloc and Release both set, every
// chunk still comes back once its bytes are in the frame.
func TestFramerAllocReleasesChunks(t *testing.T) {
	released := 0
	f := Framer{
		Alloc:   func(n int) []byte { return make([]byte, 0, n) },
		Release: func(c []byte) { released++; clear(c) },
	}
	var got []byte
	for _, c := range []string{"x", "yy", "z\n"} {
		f.Push([]byte(c), func(fr []byte, _ bool) { got = bytes.Clone(fr) })
	}
	if string(got) != "xyyz" || released != 3 {
		t.Errorf("frame %q with %d chunks released, want \"xyyz\" and 3", got, released)
	}
}
