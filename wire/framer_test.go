package wire

import (
	"bytes"
	"strings"
	"testing"
)

// frameAll pushes input in chunks of the given size and collects frames.
// With release, the Framer hands chunks back through Release: each is
// scribbled over at once (so a piece still in use would corrupt a frame)
// and must come back exactly once by the end.
func frameAll(t testing.TB, input []byte, chunk int, release bool) (frames [][]byte, rest []byte) {
	var f Framer
	pushed, released := 0, map[*byte]bool{}
	if release {
		f.Release = func(c []byte) {
			if len(c) == 0 {
				return
			}
			if released[&c[0]] {
				t.Fatalf("chunk %.20q released twice", c)
			}
			released[&c[0]] = true
			for i := range c {
				c[i] = '#'
			}
		}
	}
	collect := func(fr []byte, _ bool) { frames = append(frames, append([]byte(nil), fr...)) }
	for len(input) > 0 {
		n := min(chunk, len(input))
		f.Push(append([]byte(nil), input[:n]...), collect) // the Framer owns what it is given
		pushed++
		input = input[n:]
	}
	f.Flush(func(fr []byte) { rest = append([]byte(nil), fr...) })
	if release && len(released) != pushed {
		t.Fatalf("%d of %d chunks released after Flush", len(released), pushed)
	}
	return frames, rest
}

func TestFramer(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1<<20)
	tests := []struct {
		name   string
		input  string
		frames []string
		rest   string
	}{
		{"empty", "", nil, ""},
		{"one line", "a\n", []string{"a"}, ""},
		{"no final newline", "a\nb", []string{"a"}, "b"},
		{"empty lines", "\n\n", []string{"", ""}, ""},
		{"crlf kept", "a\r\nb\r\n", []string{"a\r", "b\r"}, ""},
		{"binary", "\x00\xff\n\x01", []string{"\x00\xff"}, "\x01"},
		{"huge", string(big) + "\nz", []string{string(big)}, "z"},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 3, 4096, 1 << 30} {
			for _, release := range []bool{false, true} {
				frames, rest := frameAll(t, []byte(tt.input), chunk, release)
				if len(frames) != len(tt.frames) {
					t.Fatalf("%s/chunk %d/release %v: %d frames, want %d", tt.name, chunk, release, len(frames), len(tt.frames))
				}
				for i := range frames {
					if string(frames[i]) != tt.frames[i] {
						t.Errorf("%s/chunk %d/release %v: frame %d = %.40q, want %.40q", tt.name, chunk, release, i, frames[i], tt.frames[i])
					}
				}
				if string(rest) != tt.rest {
					t.Errorf("%s/chunk %d/release %v: rest %q, want %q", tt.name, chunk, release, rest, tt.rest)
				}
			}
		}
	}
}

func TestFramerGap(t *testing.T) {
	type got struct {
		frame string
		lost  bool
	}
	var out []got
	emit := func(fr []byte, lost bool) { out = append(out, got{string(fr), lost}) }
	var f Framer
	f.Push([]byte("whole\npart of a"), emit)
	f.Gap(true, emit) // bytes lost, the rest of that line included
	if f.Push([]byte("...rest\nnext\n"), emit) != true {
		t.Error("Push should report the end of the skipped frame")
	}
	want := []got{{"whole", false}, {"part of a", true}, {"next", false}}
	if len(out) != len(want) {
		t.Fatalf("got %+v, want %+v", out, want)
	}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("frame %d = %+v, want %+v", i, out[i], want[i])
		}
	}
	f.Push([]byte("tail"), emit)
	var rest string
	if f.Flush(func(fr []byte) { rest = string(fr) }) || rest != "tail" {
		t.Errorf("Flush gave %q", rest)
	}
}

// FuzzFramer checks that framing loses and invents no byte, whatever the
// chunking: joining the frames with "\n" and the rest gives the input back.
func FuzzFramer(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n{\"x\":1}"), uint8(3))
	f.Add([]byte("\xff\x00\n"), uint8(1))
	f.Fuzz(func(t *testing.T, input []byte, chunk uint8) {
		frames, rest := frameAll(t, input, int(chunk)+1, chunk%2 == 1)
		var out []byte
		for _, fr := range frames {
			if bytes.IndexByte(fr, '\n') >= 0 {
				t.Fatalf("frame contains a newline: %q", fr)
			}
			out = append(append(out, fr...), '\n')
		}
		out = append(out, rest...)
		if !bytes.Equal(out, input) {
			t.Fatalf("reassembled %q, want %q", out, input)
		}
	})
}

// TestFramerGapEndsSkip: a gap that ends on a line boundary also ends the
// lost frame being skipped, so the whole line after it is kept.
func TestFramerGapEndsSkip(t *testing.T) {
	var frames []string
	emit := func(fr []byte, lost bool) {
		if !lost {
			frames = append(frames, string(fr))
		}
	}
	var f Framer
	f.Gap(true, emit)           // "abc" lost mid-line
	f.Push([]byte("def"), emit) // the rest of that line, skipped
	f.Gap(false, emit)          // "gh\nij\n" lost: the skipped line ended there
	if f.Push([]byte("k\nl\n"), emit) {
		t.Error("Push reported a skipped frame ending, but the gap ended it")
	}
	if len(frames) != 2 || frames[0] != "k" || frames[1] != "l" {
		t.Errorf("frames after the gap = %q, want [k l]", frames)
	}
}

// TestFramerComplete: a frame finished elsewhere gets the pieces the
// Framer holds copied to its front, unless what it holds does not match
// (bytes were lost); either way the Framer starts afresh.
func TestFramerComplete(t *testing.T) {
	tests := []struct {
		name   string
		pushed []string // chunks before Complete
		gap    bool     // a Gap with resync after them
		prefix int
		ok     bool
	}{
		{"holds the prefix, in pieces", []string{"ab", "cd"}, false, 4, true},
		{"holds nothing, prefix nothing", nil, false, 0, true},
		{"holds less than the prefix", []string{"ab"}, false, 4, false},
		{"holds more than the prefix", []string{"abcde"}, false, 4, false},
		{"skipping after a gap", []string{"ab", "cd"}, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Framer
			var frames []string
			emit := func(fr []byte, _ bool) { frames = append(frames, string(fr)) }
			for _, c := range tt.pushed {
				f.Push([]byte(c), emit)
			}
			if tt.gap {
				f.Gap(true, emit)
				frames = nil
			}
			line := append(bytes.Repeat([]byte{'.'}, tt.prefix), "XYZ"...)
			if got := f.Complete(line, tt.prefix); got != tt.ok {
				t.Fatalf("Complete = %v, want %v", got, tt.ok)
			}
			if tt.ok && string(line) != strings.Join(tt.pushed, "")+"XYZ" {
				t.Errorf("line = %q, want the pieces then XYZ", line)
			}
			if f.Pending() != 0 {
				t.Errorf("%d bytes still pending", f.Pending())
			}
			f.Push([]byte("next\n"), emit)
			if len(frames) != 1 || frames[0] != "next" {
				t.Errorf("after Complete, frames %q; want [next]", frames)
			}
		})
	}
}
