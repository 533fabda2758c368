package capture

import (
	"bytes"
	"testing"
)

func TestAppendInSteps(t *testing.T) {
	for _, tt := range []struct {
		name     string
		dst, src int
	}{
		{"nothing", 0, 0},
		{"less than a step", 3, 10},
		{"one step", 0, copyStep},
		{"a byte past a step", 5, copyStep + 1},
		{"several steps", 7, 3*copyStep + 12345},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dst := bytes.Repeat([]byte{'d'}, tt.dst)
			src := make([]byte, tt.src)
			for i := range src {
				src[i] = byte(i * 7)
			}
			got := appendInSteps(dst, src)
			if want := append(bytes.Repeat([]byte{'d'}, tt.dst), src...); !bytes.Equal(got, want) {
				t.Fatalf("appendInSteps(%d bytes, %d bytes) gave %d bytes, not the two joined", tt.dst, tt.src, len(got))
			}
		})
	}
}
