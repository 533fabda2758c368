package capture

import (
	"fmt"
	"path/filepath"
	"runtime/debug"

	"github.com/acpscope/acpscope/wire"
)

// copyQueueBytes bounds the hand-off queue of a Writer an import or
// export fills. Small, since the copier waits for room rather than drop
// a record: more would only be more memory.
const copyQueueBytes = 2 << 20

// copyQueueChunks bounds the items in that queue (a variable for tests).
var copyQueueChunks = 4096

// copyOptions are the options of a Writer that an import or an export
// fills through a copier: no live feed, a small queue, and groups
// committed by size more than by time.
func copyOptions(meta Meta) WriterOptions {
	return WriterOptions{Meta: meta, NoFeed: true, QueueBytes: copyQueueBytes, QueueChunks: copyQueueChunks, CommitBytes: 2 << 20, CommitRecords: 10000, releaseMapped: true, noWire: true}
}

// copier writes records into a Writer the way they first arrived: stdio
// lines as whole lines of their streams (so CRLF, partial lines and
// stderr come out the same), HTTP and WebSocket messages as frames with
// their envelopes. It hands each body over without copying it and waits
// for the Writer rather than lose a record.
type copier struct {
	w *Writer
}

func newCopier(w *Writer) *copier { return &copier{w: w} }

// recordStream is the stdio stream a record came on.
func recordStream(r *Record) Stream {
	switch {
	case r.Kind == wire.KindStderr:
		return StreamStderr
	case r.Dir == wire.DirClient:
		return StreamClient
	}
	return StreamAgent
}

// put hands r over; the Writer keeps r.Body, so the caller must not
// change it afterwards.
func (c *copier) put(r *Record) error {
	body := r.Body
	if body == nil {
		body = []byte{} // an empty message is still one
	}
	flags := r.Flags &^ wire.FlagBatchMember
	if r.HTTP != nil && r.Kind != wire.KindStderr {
		c.w.put(item{kind: itemFrame, dir: r.Dir, conn: r.Conn, t: r.Time, flags: flags, env: r.HTTP, data: body})
	} else {
		s := recordStream(r)
		c.w.put(item{kind: itemLine, stream: s, dir: s.Dir(), conn: r.Conn, t: r.Time, flags: flags, data: body})
	}
	c.afterPut(len(body))
	return nil
}

// afterPut follows the hand-over of a body of n bytes.
func (c *copier) afterPut(n int) {
	if n > bigMessage {
		// The caller's copies of a large message (the line it was read
		// from, the body before redaction) are garbage now: return them
		// before the Writer makes its own copy at commit. Then wait for
		// that commit, so that the next large message is not read while
		// this one is still held: memory stays within twice the largest.
		debug.FreeOSMemory()
		c.w.sync()
	}
}

// line is one message to import, whatever format it came from.
type line struct {
	t      int64
	stream Stream
	body   []byte
	// HTTP and WebSocket messages (from our JSONL) keep their envelope.
	conn  uint32
	dir   wire.Dir
	flags wire.Flags
	env   *wire.Envelope
	// frame: the body is one whole message as it crossed, recorded as a
	// frame (it may hold a newline) rather than a line of a stream.
	frame bool
}

// putLine hands l over as put does a record; the Writer keeps l.body.
func (c *copier) putLine(l *line) {
	body := l.body
	if body == nil {
		body = []byte{} // an empty message is still one
	}
	switch {
	case (l.env != nil || l.frame) && l.stream != StreamStderr:
		c.w.put(item{kind: itemFrame, dir: l.dir, conn: l.conn, t: l.t, flags: l.flags, env: l.env, data: body})
	default:
		c.w.put(item{kind: itemLine, stream: l.stream, dir: l.stream.Dir(), conn: l.conn, t: l.t, flags: l.flags, data: body})
	}
	c.afterPut(len(body))
}

// finish closes the writer and checks nothing was lost on the way.
func (c *copier) finish() error {
	if err := c.w.Close(); err != nil {
		return err
	}
	if l := c.w.Stats().Loss; l.Messages > 0 || l.Bytes > 0 {
		return fmt.Errorf("writing %s: %d records (%d bytes) could not be written; try again", filepath.Base(c.w.Path()), l.Messages, l.Bytes)
	}
	return nil
}
