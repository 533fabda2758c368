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
func (f *lineFramer) gap(resync bool, emit emitFunc) {
	if f.pending > 0 {
		emit(f.assemble(nil), true)
	}
	f.skipping = resync
}

// push consumes an owned chunk.
func (f *lineFramer) push(data []byte, emit emitFunc) {
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if f.skipping {
			if nl < 0 {
				return
			}
			f.skipping = false
			data = data[nl+1:]
			continue
		}
		if nl < 0 {
			f.pieces = append(f.pieces, data)
			f.pending += len(data)
			return
		}
		if f.pending == 0 {
			emit(data[:nl:nl], false)
		} else {
			emit(f.assemble(data[:nl]), false)
		}
		data = data[nl+1:]
	}
}

// flush hands out an unfinished frame at the end of the stream.
func (f *lineFramer) flush(emit func(frame []byte)) {
	f.skipping = false
	if f.pending > 0 {
		emit(f.assemble(nil))
	}
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
