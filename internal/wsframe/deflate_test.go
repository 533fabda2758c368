package wsframe

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// sender compresses messages as a permessage-deflate peer does: one
// flush per message, its 00 00 ff ff tail stripped; with takeover the
// compressor's history carries over from message to message.
type sender struct {
	takeover bool
	buf      bytes.Buffer
	w        *flate.Writer
}

func (s *sender) send(t testing.TB, msg string) []byte {
	t.Helper()
	if s.w == nil || !s.takeover {
		s.w, _ = flate.NewWriter(&s.buf, flate.BestCompression)
	}
	s.buf.Reset()
	if _, err := s.w.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	if err := s.w.Flush(); err != nil {
		t.Fatal(err)
	}
	b := bytes.Clone(s.buf.Bytes())
	if !bytes.HasSuffix(b, []byte{0, 0, 0xff, 0xff}) {
		t.Fatalf("a flush ends in %x", b[len(b)-4:])
	}
	return b[:len(b)-4]
}

// TestInflate decodes messages that refer back to earlier ones, further
// back than one message and across the window's slide.
func TestInflate(t *testing.T) {
	var msgs []string
	for i := range 12 {
		msgs = append(msgs, fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"n":%d,"text":%q}}`, i, strings.Repeat("abcdefgh", i*700)))
	}
	for _, takeover := range []bool{true, false} {
		t.Run(fmt.Sprintf("context takeover %v", takeover), func(t *testing.T) {
			s := &sender{takeover: takeover}
			var f Inflater
			wire := 0
			for i, m := range msgs {
				p := s.send(t, m)
				wire += len(p)
				out, truncated, err := f.Inflate(p, 1<<20)
				if err != nil || truncated || string(out) != m {
					t.Fatalf("message %d: %d bytes, truncated %v, %v", i, len(out), truncated, err)
				}
			}
			t.Logf("%d messages in %d compressed bytes", len(msgs), wire)
		})
	}
}

func TestInflateOverTheLimit(t *testing.T) {
	s := &sender{takeover: true}
	var f Inflater
	big := strings.Repeat("x", 100_000)
	out, truncated, err := f.Inflate(s.send(t, big), 1000)
	if err != nil || !truncated || string(out) != big[:1000] {
		t.Fatalf("%d bytes, truncated %v, %v", len(out), truncated, err)
	}
	if _, _, err := f.Inflate(s.send(t, "after"), 1000); !errors.Is(err, ErrContextLost) {
		t.Fatalf("the message after a cut one: %v, want ErrContextLost", err)
	}
}

func TestInflateCorrupt(t *testing.T) {
	var f Inflater
	if _, _, err := f.Inflate([]byte{0xff, 0xff, 0xff}, 1000); err == nil {
		t.Fatal("a corrupt payload decoded")
	}
}

func FuzzInflate(f *testing.F) {
	s := &sender{takeover: true}
	f.Add(s.send(f, `{"jsonrpc":"2.0","id":1}`), []byte{})
	f.Add(s.send(f, `{"jsonrpc":"2.0","id":2}`), s.send(f, `{"jsonrpc":"2.0","id":3}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var in Inflater
		for _, p := range [][]byte{a, b} {
			out, _, err := in.Inflate(p, 4096)
			if err == nil && len(out) > 4096 {
				t.Fatalf("%d bytes out of a 4096 limit", len(out))
			}
		}
	})
}

// BenchmarkInflate decodes a 1.1 MB update sent compressed, as the
// recorder of a compressed socket does; MB/s are of decoded bytes.
//
//	go test -run '^$' -bench Inflate ./internal/wsframe
func BenchmarkInflate(b *testing.B) {
	s := &sender{takeover: true}
	msg := `{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + strings.Repeat("The quick brown fox jumps over the lazy dog; ", 25000) + `"}}`
	p := s.send(b, msg)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		var f Inflater
		if out, _, err := f.Inflate(p, 1<<30); err != nil || len(out) != len(msg) {
			b.Fatalf("%d bytes, %v", len(out), err)
		}
	}
}
