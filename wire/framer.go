package wire

import "bytes"

// Framer splits a byte stream into newline-terminated frames with no size
// limit. Complete lines inside one chunk are handed out without copying;
// only a line that spans chunks is accumulated.
type Framer struct {
	buf []byte
}

// Push consumes chunk and calls emit with each completed frame, without
// its "\n". The slice is valid only during the call.
func (f *Framer) Push(chunk []byte, emit func(frame []byte)) {
	for len(chunk) > 0 {
		nl := bytes.IndexByte(chunk, '\n')
		if nl < 0 {
			f.buf = append(f.buf, chunk...)
			return
		}
		if len(f.buf) == 0 {
			emit(chunk[:nl])
		} else {
			f.buf = append(f.buf, chunk[:nl]...)
			emit(f.buf)
			f.release()
		}
		chunk = chunk[nl+1:]
	}
}

// Pending reports how many bytes of an unfinished frame are held.
func (f *Framer) Pending() int { return len(f.buf) }

// Flush hands out the unfinished frame at end of stream, if there is one.
func (f *Framer) Flush(emit func(frame []byte)) bool {
	if len(f.buf) == 0 {
		return false
	}
	emit(f.buf)
	f.release()
	return true
}

// Discard drops the unfinished frame (its bytes were lost upstream) and
// reports how many bytes it held.
func (f *Framer) Discard() int {
	n := len(f.buf)
	f.release()
	return n
}

// release empties the buffer, giving back memory a huge frame took.
func (f *Framer) release() {
	if cap(f.buf) > 1<<20 {
		f.buf = nil
		return
	}
	f.buf = f.buf[:0]
}
