package wire

import (
	"bytes"
	"strconv"
)

// SSEEvent is one server-sent event, or one comment line, as the
// EventSource rules (WHATWG HTML §9.2) parse it. Byte slices alias the
// decoder's buffers and are valid only during the emit call.
type SSEEvent struct {
	// Comment is set for a comment line (": keep-alive"); Data then holds
	// the text after the colon and no other field is set.
	Comment bool
	// Data is the event's data lines joined by "\n".
	Data []byte
	// ID is the value of the event's last "id" field; HasID says whether
	// one was present (an empty id resets the last event id).
	ID    string
	HasID bool
	// Event is the "event" field ("" means the default, "message").
	Event string
	// Retry is the "retry" field in milliseconds, when HasRetry.
	Retry    int64
	HasRetry bool
	// Partial marks an event the stream ended in the middle of; the
	// EventSource rules discard it, a recorder keeps it flagged.
	Partial bool
}

// SSEDecoder parses a byte stream of server-sent events incrementally,
// with no size limit. It accepts LF, CRLF and CR line endings, also split
// across chunks, and skips one leading byte-order mark.
type SSEDecoder struct {
	line []byte // an unfinished line carried between chunks
	data []byte
	// view is the event's one data line while it is a slice of the chunk
	// being pushed, copied into data before Push returns or another data
	// line comes: an event whose data and end arrive in one chunk, as a
	// flushed event does, is handed out without a copy.
	view    []byte
	hasData bool
	ev      SSEEvent
	pending bool // a field line has been seen since the last dispatch
	skipLF  bool // the previous chunk ended in "\r"
	started bool // the byte-order mark check is done
}

// Push consumes chunk and calls emit for each completed event or comment.
func (d *SSEDecoder) Push(chunk []byte, emit func(*SSEEvent)) {
	if !d.started {
		chunk = d.skipBOM(chunk)
		if !d.started {
			return
		}
	}
	if d.skipLF && len(chunk) > 0 {
		d.skipLF = false
		if chunk[0] == '\n' {
			chunk = chunk[1:]
		}
	}
	defer d.keepView()
	for len(chunk) > 0 {
		end := lineEnd(chunk)
		if end < 0 {
			d.keepView()
			d.line = append(d.line, chunk...)
			return
		}
		next := end + 1
		if chunk[end] == '\r' {
			if next == len(chunk) {
				d.skipLF = true
			} else if chunk[next] == '\n' {
				next++
			}
		}
		if len(d.line) == 0 {
			d.processLine(chunk[:end], true, emit)
		} else {
			d.line = append(d.line, chunk[:end]...)
			d.processLine(d.line, false, emit)
			d.line = d.line[:0]
		}
		chunk = chunk[next:]
	}
}

// End finishes the stream: an event cut off before its blank line is
// emitted with Partial set, so a recorder can keep it. It reports whether
// anything was pending.
func (d *SSEDecoder) End(emit func(*SSEEvent)) bool {
	if len(d.line) > 0 {
		d.processLine(d.line, false, func(e *SSEEvent) { emit(e) })
		d.line = d.line[:0]
	}
	if !d.pending {
		return false
	}
	d.ev.Partial = true
	d.dispatch(emit)
	return true
}

// skipBOM drops a UTF-8 byte-order mark at the very start of the stream,
// which may itself arrive split across chunks.
func (d *SSEDecoder) skipBOM(chunk []byte) []byte {
	const bom = "\xef\xbb\xbf"
	have := chunk
	if len(d.line) > 0 {
		have = append(append([]byte(nil), d.line...), chunk...)
	}
	if len(have) < len(bom) && bytes.HasPrefix([]byte(bom), have) {
		d.line = append(d.line[:0], have...)
		return nil
	}
	d.started = true
	d.line = d.line[:0]
	if bytes.HasPrefix(have, []byte(bom)) {
		return have[len(bom):]
	}
	return have
}

// processLine applies one line without its terminator; inChunk says it
// is a slice of the chunk being pushed, not of the decoder's own buffer.
func (d *SSEDecoder) processLine(line []byte, inChunk bool, emit func(*SSEEvent)) {
	if len(line) == 0 {
		if d.pending {
			d.dispatch(emit)
		}
		return
	}
	if line[0] == ':' {
		emit(&SSEEvent{Comment: true, Data: line[1:]})
		return
	}
	name, value := line, []byte(nil)
	if colon := bytes.IndexByte(line, ':'); colon >= 0 {
		name, value = line[:colon], line[colon+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	d.field(string(name), value, inChunk)
}

// field applies one "name: value" line to the event being built.
func (d *SSEDecoder) field(name string, value []byte, inChunk bool) {
	switch name {
	case "data":
		if !d.hasData && inChunk {
			d.view = value
		} else {
			d.keepView()
			if d.hasData {
				d.data = append(d.data, '\n')
			}
			d.data = append(d.data, value...)
		}
		d.hasData = true
	case "event":
		d.ev.Event = string(value)
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			return
		}
		d.ev.ID, d.ev.HasID = string(value), true
	case "retry":
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil || len(value) == 0 || value[0] < '0' || value[0] > '9' {
			return
		}
		d.ev.Retry, d.ev.HasRetry = n, true
	default:
		return
	}
	d.pending = true
}

// keepView copies the event's data line out of the chunk it is a slice
// of, which the caller may reuse once Push returns.
func (d *SSEDecoder) keepView() {
	if d.view != nil {
		d.data = append(d.data[:0], d.view...)
		d.view = nil
	}
}

// dispatch emits the event being built and starts a new one. An event
// without data lines is reported too (Data nil): a lone "id:" moves the
// stream's resume point, which a recorder wants to see.
func (d *SSEDecoder) dispatch(emit func(*SSEEvent)) {
	ev := d.ev
	if d.hasData {
		ev.Data = d.data
		if d.view != nil {
			ev.Data, d.view = d.view, nil
		}
		if ev.Data == nil {
			ev.Data = []byte{}
		}
	}
	emit(&ev)
	d.ev = SSEEvent{}
	d.hasData, d.pending = false, false
	if cap(d.data) > 1<<20 {
		d.data = nil
	} else {
		d.data = d.data[:0]
	}
}

// AppendSSEEvent encodes one event carrying data (split into one "data:"
// line per line of data) and, when id is not empty, an "id:" field. A
// "\r\n" or "\r" inside data becomes a line break, as a decoder would read
// it; JSON-RPC messages on one line have none.
func AppendSSEEvent(dst []byte, id string, data []byte) []byte {
	if id != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, id...)
		dst = append(dst, '\n')
	}
	for {
		dst = append(dst, "data: "...)
		end := lineEnd(data)
		if end < 0 {
			dst = append(dst, data...)
			break
		}
		dst = append(dst, data[:end]...)
		dst = append(dst, '\n')
		if data[end] == '\r' && end+1 < len(data) && data[end+1] == '\n' {
			end++
		}
		data = data[end+1:]
	}
	return append(dst, "\n\n"...)
}

// lineEnd returns the index of the first "\r" or "\n" in b, or -1. Two
// IndexByte scans (vectorised) beat bytes.IndexAny on long lines, which
// is what big events are.
func lineEnd(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	head := b
	if lf >= 0 {
		head = b[:lf]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// AppendSSEComment encodes a comment line, as used for keep-alives.
func AppendSSEComment(dst []byte, text string) []byte {
	dst = append(dst, ':')
	if text != "" {
		dst = append(dst, ' ')
		dst = append(dst, text...)
	}
	return append(dst, "\n\n"...)
}
