package main

import (
	"bytes"
	"sync/atomic"
)

// lineLoss counts one direction's loss as capture counts it: a line is
// lost when any of its bytes are. Its pump alone changes it; the counts
// are read at exit while the client's side may still be read.
type lineLoss struct {
	damaged      bool // the line in progress lost bytes
	lines, bytes atomic.Int64
}

// dropped counts a chunk the queue had no room for: every line ending in
// it is lost, and so is the one it leaves in progress.
func (l *lineLoss) dropped(b []byte) {
	l.bytes.Add(int64(len(b)))
	l.lines.Add(int64(bytes.Count(b, []byte{'\n'})))
	l.damaged = b[len(b)-1] != '\n'
}

// kept counts a chunk that was queued: it ends a damaged line in
// progress if it holds a newline.
func (l *lineLoss) kept(b []byte) {
	if l.damaged && bytes.IndexByte(b, '\n') >= 0 {
		l.lines.Add(1)
		l.damaged = false
	}
}

// end counts a damaged line the stream ended in.
func (l *lineLoss) end() {
	if l.damaged {
		l.lines.Add(1)
		l.damaged = false
	}
}
