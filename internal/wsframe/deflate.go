package wsframe

import (
	"compress/flate"
	"errors"
	"fmt"
	"io"
)

// Window is how much of what a sender compressed a later message may
// refer to (RFC 7692 §7.1.2.1: at most 2^15 bytes).
const Window = 1 << 15

// ErrContextLost: an earlier message was cut at the limit, so the
// window later messages may refer to is unknown.
var ErrContextLost = errors.New("an earlier compressed message was over the limit; later ones cannot be decoded")

// Inflater decodes the compressed messages of one direction of a
// connection that negotiated permessage-deflate. It keeps the last
// Window bytes of what it decoded, which the sender's next message may
// refer to (context takeover); when the sender resets its context
// instead (no_context_takeover) its messages never refer to them, so the
// same Inflater serves both. Uncompressed messages never enter the
// window: the sender's compressor never saw them.
type Inflater struct {
	window []byte
	r      io.ReadCloser
	lost   bool
}

// deflateTail completes a message for the decoder: the sender's flush
// ends in 00 00 ff ff, which RFC 7692 §7.2.1 strips from the wire, and an
// empty final stored block after it lets the stream end cleanly.
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// Inflate decodes one message's payload (its frames' payloads joined).
// It returns at most limit bytes, and says whether there were more: then
// it stops decoding, and later messages get ErrContextLost, because the
// rest of this one (which they may refer to) was never decoded. That
// bound is what keeps a few compressed bytes from costing gigabytes.
func (f *Inflater) Inflate(p []byte, limit int64) (out []byte, truncated bool, err error) {
	if f.lost {
		return nil, false, ErrContextLost
	}
	src := &twoPart{a: p, b: deflateTail}
	if f.r == nil {
		f.r = flate.NewReaderDict(src, f.window)
	} else if err := f.r.(flate.Resetter).Reset(src, f.window); err != nil {
		return nil, false, err
	}
	out, truncated, err = readLimited(f.r, limit)
	if err != nil {
		return nil, false, fmt.Errorf("decoding a compressed websocket message: %w", err)
	}
	f.lost = truncated
	f.keep(out)
	return out, truncated, nil
}

// keep slides the window over what was just decoded.
func (f *Inflater) keep(out []byte) {
	if len(out) >= Window {
		f.window = append(f.window[:0], out[len(out)-Window:]...)
		return
	}
	if over := len(f.window) + len(out) - Window; over > 0 {
		f.window = append(f.window[:0], f.window[over:]...)
	}
	f.window = append(f.window, out...)
}

// readLimited reads r to its end, keeping at most limit bytes; it stops
// at the first byte beyond them and reports that there was one.
func readLimited(r io.Reader, limit int64) ([]byte, bool, error) {
	out, err := io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(out)) > limit {
		return out[:limit], true, nil
	}
	return out, false, err
}

// twoPart reads a then b, byte by byte when asked, so the decoder needs
// no buffer of its own.
type twoPart struct{ a, b []byte }

func (t *twoPart) Read(p []byte) (int, error) {
	if len(t.a) == 0 {
		t.a, t.b = t.b, nil
	}
	if len(t.a) == 0 {
		return 0, io.EOF
	}
	n := copy(p, t.a)
	t.a = t.a[n:]
	return n, nil
}

func (t *twoPart) ReadByte() (byte, error) {
	if len(t.a) == 0 {
		t.a, t.b = t.b, nil
	}
	if len(t.a) == 0 {
		return 0, io.EOF
	}
	c := t.a[0]
	t.a = t.a[1:]
	return c, nil
}
