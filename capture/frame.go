package capture

import (
	"bytes"

	"github.com/acpscope/acpscope/wire"
)

// lineFramer splits one stream's owned chunks into lines. It does the
// job of wire.Framer with two differences the store needs: a line that
// spans chunks is kept as a list of pieces and assembled once at its
// exact size (a 100 MiB line costs one copy, not a doubling buffer's
// several), and after dropped bytes it skips to the next newline.
type lineFramer struct {
	pieces   [][]byte
	pending  int
	skipping bool
}

// emitFunc receives a frame and whether bytes of it were lost. The slice
// stays valid: it is owned by the caller from then on.
type emitFunc func(frame []byte, lost bool)

// gap handles dropped bytes before the next chunk: the frame in progress
// lost its tail, and with resync the bytes up to the next newline belong
// to a frame that is lost.
//
// Loss is counted once per frame: the tap counts the newlines it dropped
// (each ends a frame that overlapped the drop), and the framer counts
// the frame that straddles the end of a drop when it sees that frame end
// (push, or flush while still skipping). A frame whose end falls into a
// later drop is then counted by that drop's newlines, not twice.
func (f *lineFramer) gap(resync bool, emit emitFunc) {
	if f.pending > 0 {
		emit(f.assemble(nil), true)
	}
	f.skipping = f.skipping || resync
}

// push consumes an owned chunk. It reports whether it ended a frame
// that was being skipped (a lost frame to count).
func (f *lineFramer) push(data []byte, emit emitFunc) (endedLost bool) {
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if f.skipping {
			if nl < 0 {
				return endedLost
			}
			f.skipping, endedLost = false, true
			data = data[nl+1:]
			continue
		}
		if nl < 0 {
			f.pieces = append(f.pieces, data)
			f.pending += len(data)
			return endedLost
		}
		if f.pending == 0 {
			emit(data[:nl:nl], false)
		} else {
			emit(f.assemble(data[:nl]), false)
		}
		data = data[nl+1:]
	}
	return endedLost
}

// flush hands out an unfinished frame at the end of the stream. It
// reports whether the stream ended inside a skipped (lost) frame.
func (f *lineFramer) flush(emit func(frame []byte)) (endedLost bool) {
	endedLost, f.skipping = f.skipping, false
	if f.pending > 0 {
		emit(f.assemble(nil))
	}
	return endedLost
}

// assemble joins the pending pieces and last into one exact-size slice.
func (f *lineFramer) assemble(last []byte) []byte {
	out := make([]byte, 0, f.pending+len(last))
	for _, p := range f.pieces {
		out = append(out, p...)
	}
	out = append(out, last...)
	clear(f.pieces)
	f.pieces = f.pieces[:0]
	f.pending = 0
	return out
}

// hasCR reports a line that ended in "\r\n" (the "\r" stays in the bytes).
func hasCR(line []byte) bool {
	return len(line) > 0 && line[len(line)-1] == '\r'
}

// crlfFlag is FlagCRLF for lines ending in "\r".
func crlfFlag(line []byte) wire.Flags {
	if hasCR(line) {
		return wire.FlagCRLF
	}
	return 0
}
