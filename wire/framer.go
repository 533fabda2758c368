package wire

import "bytes"

// Framer splits one byte stream into newline-terminated frames with no
// size limit. It takes ownership of the chunks it is given: a complete
// line inside one chunk is handed out as a slice of it, without copying,
// and a line that spans chunks is kept as a list of pieces and assembled
// once, at its exact size (a 100 MiB line costs one copy, not a doubling
// buffer's several). After bytes were lost upstream (Gap) it skips to the
// next newline, so framing resynchronises instead of gluing two halves.
type Framer struct {
	// Release, when set, receives each chunk once the Framer holds no
	// piece of it, so the caller can reuse its memory. A frame handed
	// out as a slice of a chunk is then valid only until emit returns;
	// assembled frames still belong to the caller.
	Release func(chunk []byte)
	// Alloc, when set, returns the memory a frame that spans chunks is
	// assembled in: empty, with room for n bytes. The frame still belongs
	// to the caller, who may place a huge one in memory of its choosing.
	Alloc func(n int) []byte

	pieces   [][]byte
	held     [][]byte // with Release: the chunks pieces were cut from
	pending  int
	skipping bool
}

// Push consumes chunk, which the Framer now owns, and calls emit with each
// completed frame, without its "\n"; lost is never set by Push. Frames
// belong to the caller (but see Release). Push reports whether it ended a
// frame that was being skipped after a Gap (a lost frame, for the caller
// to count).
func (f *Framer) Push(chunk []byte, emit func(frame []byte, lost bool)) (endedLost bool) {
	whole, kept := chunk, false
	for len(chunk) > 0 {
		nl := bytes.IndexByte(chunk, '\n')
		if f.skipping {
			if nl < 0 {
				break
			}
			f.skipping, endedLost = false, true
			chunk = chunk[nl+1:]
			continue
		}
		if nl < 0 {
			f.pieces = append(f.pieces, chunk)
			f.pending += len(chunk)
			kept = true
			break
		}
		if f.pending == 0 {
			emit(chunk[:nl:nl], false)
		} else {
			emit(f.assemble(chunk[:nl]), false)
		}
		chunk = chunk[nl+1:]
	}
	if f.Release != nil {
		if kept {
			f.held = append(f.held, whole)
		} else {
			f.Release(whole)
		}
	}
	return endedLost
}

// Gap says bytes were lost before the next chunk: the frame in progress,
// if any, is emitted with lost set; with resync the bytes up to the next
// newline belong to a frame that is lost, and are skipped. Without it the
// lost bytes ended a line, and with it any frame being skipped: the next
// byte starts a frame.
func (f *Framer) Gap(resync bool, emit func(frame []byte, lost bool)) {
	if f.pending > 0 {
		emit(f.assemble(nil), true)
	}
	f.skipping = resync
}

// Flush hands out the unfinished frame at the end of the stream, if there
// is one. It reports whether the stream ended inside a skipped frame.
func (f *Framer) Flush(emit func(frame []byte)) (endedLost bool) {
	endedLost, f.skipping = f.skipping, false
	if f.pending > 0 {
		emit(f.assemble(nil))
	}
	return endedLost
}

// Pending reports how many bytes of an unfinished frame are held.
func (f *Framer) Pending() int { return f.pending }

// Complete ends the frame in progress with one assembled elsewhere: line
// holds the whole frame except its first prefix bytes, which are the
// pieces the Framer holds, and Complete copies them there. It reports
// false when it does not hold exactly prefix bytes, or is skipping a
// frame after a Gap: part of the frame was lost, and line is not one.
// Either way the Framer then holds nothing and starts a new frame.
func (f *Framer) Complete(line []byte, prefix int) bool {
	ok := !f.skipping && f.pending == prefix && prefix <= len(line)
	if ok {
		off := 0
		for _, p := range f.pieces {
			off += copy(line[off:], p)
		}
	}
	f.skipping = false
	f.drop()
	return ok
}

// assemble joins the pending pieces and last into one exact-size slice.
func (f *Framer) assemble(last []byte) []byte {
	var out []byte
	if n := f.pending + len(last); f.Alloc != nil {
		out = f.Alloc(n)
	} else {
		out = make([]byte, 0, n)
	}
	for _, p := range f.pieces {
		out = append(out, p...)
	}
	out = append(out, last...)
	f.drop()
	return out
}

// drop lets go of the pending pieces.
func (f *Framer) drop() {
	clear(f.pieces)
	f.pieces = f.pieces[:0]
	f.pending = 0
	for _, c := range f.held {
		f.Release(c)
	}
	clear(f.held)
	f.held = f.held[:0]
}
