package wsframe

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestParseHeader(t *testing.T) {
	key := [4]byte{1, 2, 3, 4}
	for _, tt := range []struct {
		name string
		in   []byte
		want Header
		n    int
	}{
		{"empty text", []byte{0x81, 0x00}, Header{Fin: true, Op: Text}, 2},
		{"125 bytes", []byte{0x82, 125}, Header{Fin: true, Op: Binary, Len: 125}, 2},
		{"16-bit length", []byte{0x01, 126, 0x01, 0x00}, Header{Op: Text, Len: 256}, 4},
		{"64-bit length", []byte{0x80, 127, 0, 0, 0, 1, 0, 0, 0, 0}, Header{Fin: true, Len: 1 << 32}, 10},
		{"masked", []byte{0x88, 0x82, 1, 2, 3, 4}, Header{Fin: true, Op: Close, Masked: true, Key: key, Len: 2}, 6},
		{"compressed, RSV2 and RSV3", []byte{0xf1, 5}, Header{Fin: true, Compressed: true, Reserved: 3, Op: Text, Len: 5}, 2},
		{"masked 64-bit", []byte{0x89, 0xff, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4}, Header{Fin: true, Op: Ping, Masked: true, Key: key, Len: 65536}, 14},
		{"one byte", []byte{0x81}, Header{}, 0},
		{"length cut", []byte{0x81, 126, 0}, Header{}, 0},
		{"key cut", []byte{0x81, 0x80, 1, 2, 3}, Header{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, n, err := ParseHeader(tt.in)
			if err != nil || n != tt.n || h != tt.want {
				t.Fatalf("got %+v %d %v, want %+v %d", h, n, err, tt.want, tt.n)
			}
		})
	}
	if _, _, err := ParseHeader([]byte{0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0}); !errors.Is(err, ErrBadLength) {
		t.Fatalf("a length with its top bit set: %v, want ErrBadLength", err)
	}
}

func TestPeekHeader(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want error
	}{
		{"nothing", "", io.EOF},
		{"one byte", "\x81", io.ErrUnexpectedEOF},
		{"length cut", "\x81\x7e\x00", io.ErrUnexpectedEOF},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := PeekHeader(bufio.NewReader(strings.NewReader(tt.in)))
			if err != tt.want {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	r := bufio.NewReader(bytes.NewReader([]byte{0x81, 0x83, 9, 8, 7, 6, 'a', 'b', 'c'}))
	h, n, err := PeekHeader(r)
	if err != nil || n != 6 || h.Len != 3 || h.Key != [4]byte{9, 8, 7, 6} {
		t.Fatalf("got %+v %d %v", h, n, err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "\x81\x83\x09\x08\x07\x06abc" {
		t.Fatalf("the payload left to read is %q", rest)
	}
}

// TestUnmask checks unmasking in pieces of every alignment against a
// byte-at-a-time reference.
func TestUnmask(t *testing.T) {
	key := [4]byte{0xde, 0xad, 0xbe, 0xef}
	plain := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog ", 5))
	want := make([]byte, len(plain))
	for i := range plain {
		want[i] = plain[i] ^ key[i%4]
	}
	for split := 0; split <= 19; split++ {
		got := append([]byte(nil), plain...)
		pos := Unmask(got[:split], key, 0)
		if pos = Unmask(got[split:], key, pos); pos != int64(len(plain)) {
			t.Fatalf("position %d, want %d", pos, len(plain))
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("split at %d: masked bytes differ", split)
		}
	}
}

func TestAppendClose(t *testing.T) {
	key := [4]byte{7, 7, 1, 9}
	long := strings.Repeat("r", 200)
	for _, tt := range []struct {
		name   string
		code   int
		reason string
		mask   bool
		want   string
	}{
		{"from a server", 1009, "too big", false, "too big"},
		{"from a client", 1000, "bye", true, "bye"},
		{"reason cut to fit", 4000, long, true, long[:MaxCloseReason]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendClose(nil, tt.code, tt.reason, tt.mask, key)
			h, n, err := ParseHeader(b)
			if err != nil || !h.Fin || h.Op != Close || h.Masked != tt.mask || h.Len != int64(len(b)-n) || h.Len > MaxControlPayload {
				t.Fatalf("header %+v %d %v of %d bytes", h, n, err, len(b))
			}
			p := b[n:]
			if h.Masked {
				Unmask(p, h.Key, 0)
			}
			if code, reason := ParseClose(p); code != tt.code || reason != tt.want {
				t.Fatalf("close %d %q", code, reason)
			}
		})
	}
	if code, reason := ParseClose(nil); code != NoStatus || reason != "" {
		t.Fatalf("an empty close reads as %d %q", code, reason)
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range [][]byte{{0x81, 0x05}, {0x01, 126, 1, 0}, {0x88, 0xff, 0, 0, 0, 0, 0, 0, 1, 0, 1, 2, 3, 4}, {0x82, 127, 0x80}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := ParseHeader(b)
		switch {
		case err != nil:
			if !errors.Is(err, ErrBadLength) {
				t.Fatalf("unexpected error %v", err)
			}
		case n == 0:
			if len(b) >= MaxHeaderLen {
				t.Fatalf("%x: asks for more than a header's %d bytes", b, MaxHeaderLen)
			}
		case n > len(b) || n > MaxHeaderLen || h.Len < 0:
			t.Fatalf("%x: took %d bytes, length %d", b, n, h.Len)
		}
		h2, n2, err2 := PeekHeader(bufio.NewReader(bytes.NewReader(b)))
		if n > 0 && (h2 != h || n2 != n || err2 != nil) {
			t.Fatalf("%x: PeekHeader %+v %d %v, ParseHeader %+v %d", b, h2, n2, err2, h, n)
		}
	})
}
