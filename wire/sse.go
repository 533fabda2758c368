package wire

import (
	"bytes"
	"strconv"
)

// SSEEvent is one server-sent event, or one comment line, as the
// EventSource rules (WHATWG HTML §9.2) parse it. The event and its byte
// slices, which alias the decoder's buffers or the chunk being pushed,
// are valid only during the emit call.
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
	// Oversize marks an event whose data passed the decoder's Limit: its
	// data was dropped as it came, and Data is empty.
	Oversize bool
	// Detached says Data is memory the decoder lets go of once emit
	// returns: the callee may keep it rather than copy it. Only a big
	// event's data is (see bigData); a small one's buffer is reused.
	Detached bool
	// InChunk says Data is a slice of the chunk being pushed, not of the
	// decoder's memory: it stays valid as long as the caller keeps that
	// chunk, so a caller that owns the chunk may lend the event out
	// rather than copy it. It holds for an event whose one data line and
	// end arrived in the same chunk, as a flushed event does.
	InChunk bool
}

// SSEDecoder parses a byte stream of server-sent events incrementally.
// It accepts LF, CRLF and CR line endings, also split across chunks, and
// skips one leading byte-order mark.
type SSEDecoder struct {
	// Limit bounds what one event holds in memory, 0 for no bound. A
	// data line longer than Limit, or data lines joined past it, make
	// the event oversize: its data is dropped as it arrives and the event
	// handed out with Oversize set. Any other line longer than Limit is
	// dropped whole. Without a bound, a stream that never ends a line
	// would grow the decoder without end. The same input gives the same
	// events however it is cut into chunks.
	Limit int
	line  []byte // an unfinished line carried between chunks
	data  []byte
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
	// lineOver: the line carried between chunks passed Limit and is
	// being dropped; line keeps its first bytes, to tell its field.
	lineOver bool
	over     bool // the event's data passed Limit
	// out is the event handed to emit: one per decoder, not one per event
	// made on the heap (emit may not keep it).
	out SSEEvent
}

// bigData is the size from which the decoder's buffers are not kept for
// the next line or event: a big event's data is handed out detached, and
// moved rather than copied from the line that carried it, so an event
// of hundreds of megabytes is held once, not two or three times.
const bigData = 1 << 20

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
			d.carry(chunk)
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
			d.carry(chunk[:end])
			d.processLine(d.line, false, emit)
			d.nextLine()
		}
		chunk = chunk[next:]
	}
}

// End finishes the stream: an event cut off before its blank line is
// emitted with Partial set, so a recorder can keep it. It reports whether
// anything was pending.
func (d *SSEDecoder) End(emit func(*SSEEvent)) bool {
	if len(d.line) > 0 || d.lineOver {
		d.processLine(d.line, false, func(e *SSEEvent) { emit(e) })
		d.nextLine()
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

// carry keeps b as part of the line continued in the next chunk. Past
// Limit, the line is dropped but for its first bytes, which tell whether
// it is a data line.
func (d *SSEDecoder) carry(b []byte) {
	if !d.lineOver && d.Limit > 0 && len(d.line)+len(b) > d.Limit {
		d.lineOver = true
		d.line = append([]byte(nil), d.line[:min(len(d.line), len(dataField))]...)
	}
	if d.lineOver {
		if n := len(dataField) - len(d.line); n > 0 {
			d.line = append(d.line, b[:min(n, len(b))]...)
		}
		return
	}
	if need := len(d.line) + len(b); need > cap(d.line) {
		// Doubling, where append grows big slices by a quarter: the
		// buffers a huge line outgrows add up to its size, not four
		// times it, before the collector takes them back.
		size := max(need, 2*cap(d.line))
		if d.Limit > 0 {
			size = min(size, d.Limit) // need is within it
		}
		grown := make([]byte, len(d.line), size)
		d.line = grown[:copy(grown, d.line)]
	}
	d.line = append(d.line, b...)
}

// nextLine readies the line buffer for the next line. A big one goes:
// the event's data may have taken it over (see field), and it is not
// kept for the rest of a long stream anyway.
func (d *SSEDecoder) nextLine() {
	if cap(d.line) > bigData {
		d.line = nil
	}
	d.line, d.lineOver = d.line[:0], false
}

// dataField begins every data line longer than its name.
const dataField = "data:"

// isDataLine reports whether line (at least its first five bytes) is a
// data field.
func isDataLine(line []byte) bool { return bytes.HasPrefix(line, []byte(dataField)) }

// processLine applies one line without its terminator; inChunk says it
// is a slice of the chunk being pushed, not of the decoder's own buffer.
func (d *SSEDecoder) processLine(line []byte, inChunk bool, emit func(*SSEEvent)) {
	if d.lineOver || d.Limit > 0 && len(line) > d.Limit {
		d.longLine(line)
		return
	}
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

// longLine applies a line longer than Limit (only its kind known, when
// carried): a data line makes the event oversize, any other is dropped.
func (d *SSEDecoder) longLine(line []byte) {
	if isDataLine(line) {
		d.oversize()
	}
}

// oversize drops the event's data, which passed Limit.
func (d *SSEDecoder) oversize() {
	d.view, d.data = nil, d.data[:0]
	if cap(d.data) > bigData {
		d.data = nil
	}
	d.over, d.hasData, d.pending = true, true, true
}

// dataLen returns how many bytes of data the event holds so far.
func (d *SSEDecoder) dataLen() int {
	if d.view != nil {
		return len(d.view)
	}
	return len(d.data)
}

// field applies one "name: value" line to the event being built.
func (d *SSEDecoder) field(name string, value []byte, inChunk bool) {
	switch name {
	case "data":
		if d.over {
			return
		}
		if d.hasData && d.Limit > 0 && d.dataLen()+1+len(value) > d.Limit {
			d.oversize()
			return
		}
		switch {
		case !d.hasData && inChunk:
			d.view = value
		case !d.hasData && len(value) > bigData:
			d.data = value // the carried line's memory, not a copy (see nextLine)
		default:
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
	ev := &d.out
	*ev = d.ev
	ev.Oversize = d.over
	if d.hasData {
		ev.Data, ev.Detached = d.data, cap(d.data) > bigData
		if d.view != nil {
			ev.Data, ev.Detached, ev.InChunk, d.view = d.view, false, true, nil
		}
		if ev.Data == nil {
			ev.Data = []byte{}
		}
	}
	emit(ev)
	*ev = SSEEvent{}
	d.ev = SSEEvent{}
	d.hasData, d.pending, d.over = false, false, false
	if cap(d.data) > bigData {
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
