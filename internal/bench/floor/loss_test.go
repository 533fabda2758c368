package main

import "testing"

// TestLineLoss: a line is lost when any of its bytes are, counted once,
// whatever chunks it came in.
func TestLineLoss(t *testing.T) {
	type chunk struct {
		b       string
		dropped bool
	}
	for _, tc := range []struct {
		name   string
		chunks []chunk
		lost   int64
	}{
		{"all kept", []chunk{{"a\nb", false}, {"c\n", false}}, 0},
		{"a drop of whole lines", []chunk{{"a\nb\n", true}, {"c\n", false}}, 2},
		{"a drop ending on a newline leaves the next line whole", []chunk{{"ab\n", true}, {"cd", false}, {"\n", false}}, 1},
		{"a drop inside a line costs that line once", []chunk{{"ab", false}, {"cd", true}, {"ef\ng\n", false}}, 1},
		{"the rest of a damaged line, then more lines", []chunk{{"a", true}, {"b", false}, {"c\nd\n", false}}, 1},
		{"a damaged line ended by a kept newline, then a dropped line", []chunk{{"a", true}, {"b\n", false}, {"c\n", true}}, 2},
		{"drops in a row", []chunk{{"a\nb", true}, {"c\nd", true}, {"e\n", false}}, 3},
		{"a damaged last line with no newline", []chunk{{"a\nb", false}, {"c", true}}, 1},
		{"a drop of several newlines mid-line", []chunk{{"x", false}, {"1\n2\n3", true}, {"\n", false}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l lineLoss
			var bytes int64
			for _, c := range tc.chunks {
				if c.dropped {
					l.dropped([]byte(c.b))
					bytes += int64(len(c.b))
				} else {
					l.kept([]byte(c.b))
				}
			}
			l.end()
			if l.lines.Load() != tc.lost || l.bytes.Load() != bytes {
				t.Errorf("lost %d lines, %d bytes; want %d, %d", l.lines.Load(), l.bytes.Load(), tc.lost, bytes)
			}
		})
	}
}
