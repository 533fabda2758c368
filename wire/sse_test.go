package wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// sseString renders decoded events compactly so tables can compare them.
func sseString(e *SSEEvent) string {
	if e.Comment {
		return fmt.Sprintf("comment(%q)", e.Data)
	}
	s := fmt.Sprintf("data=%q", e.Data)
	if e.Data == nil {
		s = "nodata"
	}
	if e.HasID {
		s += fmt.Sprintf(" id=%q", e.ID)
	}
	if e.Event != "" {
		s += " event=" + e.Event
	}
	if e.HasRetry {
		s += fmt.Sprintf(" retry=%d", e.Retry)
	}
	if e.Partial {
		s += " partial"
	}
	if e.Oversize {
		s += " oversize"
	}
	return s
}

// decodeAll decodes chunks as a reverse proxy hands them over: each in
// the same reused buffer, scribbled over once Push returns, so that an
// event that kept a piece of an earlier chunk shows it.
func decodeAll(chunks ...[]byte) []string {
	return decodeLimited(0, chunks...)
}

// decodeLimited is decodeAll with the decoder's Limit set.
func decodeLimited(limit int, chunks ...[]byte) []string {
	d := SSEDecoder{Limit: limit}
	var out []string
	emit := func(e *SSEEvent) { out = append(out, sseString(e)) }
	var buf []byte
	for _, c := range chunks {
		buf = append(buf[:0], c...)
		d.Push(buf, emit)
		for i := range buf {
			buf[i] = 'X'
		}
	}
	d.End(emit)
	return out
}

func TestSSEDecoder(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"one event", "data: {\"a\":1}\n\n", []string{`data="{\"a\":1}"`}},
		{"multi-line data", "data: a\ndata: b\n\n", []string{`data="a\nb"`}},
		{"no space after colon", "data:x\n\n", []string{`data="x"`}},
		{"only one space removed", "data:  x\n\n", []string{`data=" x"`}},
		{"crlf", "data: a\r\ndata: b\r\n\r\n", []string{`data="a\nb"`}},
		{"cr", "data: a\rdata: b\r\r", []string{`data="a\nb"`}},
		{"comment", ": keep-alive\n\n", []string{`comment(" keep-alive")`}},
		{"id event retry", "id: 7\nevent: message\nretry: 1500\ndata: x\n\n",
			[]string{`data="x" id="7" event=message retry=1500`}},
		{"bad retry ignored", "retry: 1x\ndata: x\n\n", []string{`data="x"`}},
		{"id with NUL ignored", "id: a\x00b\ndata: x\n\n", []string{`data="x"`}},
		{"empty data dispatches", "data\n\n", []string{`data=""`}},
		{"lone id reported", "id: 9\n\n", []string{`nodata id="9"`}},
		{"unknown field ignored", "foo: bar\n\n", nil},
		{"blank lines alone", "\n\n\n", nil},
		{"bom skipped", "\xef\xbb\xbfdata: x\n\n", []string{`data="x"`}},
		{"partial at end", "data: x\n", []string{`data="x" partial`}},
		{"partial line at end", "data: x", []string{`data="x" partial`}},
		{"two events", "data: 1\n\ndata: 2\n\n", []string{`data="1"`, `data="2"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeAll([]byte(tt.in))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			// Byte by byte must give the same result.
			if got1 := decodeAll(oneByteChunks(tt.in)...); strings.Join(got1, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("byte by byte got %q, want %q", got1, tt.want)
			}
		})
	}
}

// TestSSEDecoderReusedChunks: the caller reuses one buffer for every
// chunk, as a reader does. An event whose data and end arrive in one
// chunk is handed out as a slice of it, without a copy; one whose end
// comes in a later chunk still holds its own bytes, whatever the buffer
// holds by then.
func TestSSEDecoderReusedChunks(t *testing.T) {
	tests := []struct {
		name    string
		chunks  []string
		want    []string
		inChunk bool // the first event's data is a slice of its chunk
	}{
		{"data and end in one chunk", []string{"data: abc\n\n"}, []string{"abc"}, true},
		{"end in the next chunk", []string{"data: abc\n", "\n"}, []string{"abc"}, false},
		{"line split across chunks", []string{"data: a", "bc\n\n"}, []string{"abc"}, false},
		{"two data lines, one chunk", []string{"data: a\ndata: b\n\n"}, []string{"a\nb"}, false},
		{"second data line in the next chunk", []string{"data: a\n", "data: b\n\n"}, []string{"a\nb"}, false},
		{"two events, one chunk", []string{"data: 1\n\ndata: 2\n\n"}, []string{"1", "2"}, true},
		{"an event then a cut one", []string{"data: 1\n\ndata: 2\n", "\n"}, []string{"1", "2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d SSEDecoder
			buf := make([]byte, 64)
			var got []string
			inChunk := false
			for _, c := range tt.chunks {
				chunk := buf[:copy(buf, c)]
				d.Push(chunk, func(e *SSEEvent) {
					if len(got) == 0 && len(e.Data) > 0 {
						p := &e.Data[0]
						inChunk = uintptr(unsafe.Pointer(p)) >= uintptr(unsafe.Pointer(&buf[0])) &&
							uintptr(unsafe.Pointer(p)) < uintptr(unsafe.Pointer(&buf[0]))+uintptr(len(buf))
					}
					got = append(got, string(e.Data))
				})
				for i := range buf { // the caller reads its next chunk into the same buffer
					buf[i] = '#'
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("events %q, want %q", got, tt.want)
			}
			if inChunk != tt.inChunk {
				t.Errorf("first event's data a slice of its chunk: %v, want %v", inChunk, tt.inChunk)
			}
		})
	}
}

// TestSSEDecoderLimit: past the limit an event's data is dropped and the
// event flagged, other long lines are dropped, and the stream goes on;
// whole or byte by byte, the same.
func TestSSEDecoderLimit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"at the limit", "data: 0123\n\n", []string{`data="0123"`}},
		{"data line over", "data: 01234\n\ndata: x\n\n", []string{`data="" oversize`, `data="x"`}},
		{"joined data over", "data:01234\ndata:56789\n\n", []string{`data="" oversize`}},
		{"joined data at the limit", "data:0123\ndata:45678\n\n", []string{`data="0123\n45678"`}},
		{"later lines after over ignored", "data: 0123456\ndata: a\nid: 5\n\n", []string{`data="" id="5" oversize`}},
		{"long id dropped", "id: 0123456\ndata: x\n\n", []string{`data="x"`}},
		{"long comment dropped", ": 0123456789\ndata: x\n\n", []string{`data="x"`}},
		{"long field name dropped", "dataaaaaaaa: x\n\n", nil},
		{"partial oversize at end", "data: 0123456789", []string{`data="" partial oversize`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunks := range [][][]byte{{[]byte(tt.in)}, oneByteChunks(tt.in)} {
				if got := decodeLimited(10, chunks...); strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Fatalf("in %d chunks: got %q, want %q", len(chunks), got, tt.want)
				}
			}
		})
	}
}

// TestSSEDecoderLimitBoundsMemory: a line that never ends, pushed 32 KiB
// at a time, leaves the decoder holding no more than its limit.
func TestSSEDecoderLimitBoundsMemory(t *testing.T) {
	const limit = 1 << 20
	d := SSEDecoder{Limit: limit}
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	d.Push([]byte("data: "), func(*SSEEvent) {})
	for range 64 << 20 / len(chunk) {
		d.Push(chunk, func(*SSEEvent) { t.Fatal("an event before the line ended") })
	}
	if cap(d.line) > 2*limit || cap(d.data) > 2*limit {
		t.Fatalf("after 64 MiB of one line the decoder holds %d + %d bytes, limit %d", cap(d.line), cap(d.data), limit)
	}
	var got []string
	d.Push([]byte("\n\ndata: next\n\n"), func(e *SSEEvent) { got = append(got, sseString(e)) })
	if strings.Join(got, "|") != `data="" oversize|data="next"` {
		t.Fatalf("events %q", got)
	}
}

func TestSSEDecoderHugeEvent(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 16<<20)
	in := AppendSSEEvent(nil, "", payload)
	var d SSEDecoder
	var got []byte
	for _, c := range chunksOf(in, 32<<10) {
		d.Push(c, func(e *SSEEvent) { got = append([]byte(nil), e.Data...) })
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("16 MiB event: got %d bytes, want %d", len(got), len(payload))
	}
}

// TestSSEDecoderBigEventsDetached: a big event's data is handed out
// detached, so a recorder may keep it: it stays intact however the
// stream goes on, while small events' buffers are reused.
func TestSSEDecoderBigEventsDetached(t *testing.T) {
	big := func(c byte) string { return strings.Repeat(string(c), 3<<20) }
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"one data line", "data: " + big('a') + "\n\n", big('a')},
		{"two data lines", "data: " + big('a') + "\ndata: " + big('b') + "\n\n", big('a') + "\n" + big('b')},
		{"a small line, then a big one", "data: x\ndata: " + big('a') + "\n\n", "x\n" + big('a')},
		{"a big line, then an id", "data: " + big('a') + "\nid: 4\n\n", big('a')},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d SSEDecoder
			var kept [][]byte
			var small []string
			emit := func(e *SSEEvent) {
				switch {
				case e.Detached:
					kept = append(kept, e.Data)
				case len(e.Data) > bigData:
					t.Fatalf("a %d-byte event was not detached", len(e.Data))
				default:
					small = append(small, string(e.Data))
				}
			}
			buf := make([]byte, 32<<10)
			push := func(in string, n int) {
				for rest := []byte(in); len(rest) > 0; {
					chunk := buf[:copy(buf[:n], rest)]
					rest = rest[len(chunk):]
					d.Push(chunk, emit)
					for i := range chunk {
						chunk[i] = '#'
					}
				}
			}
			for range 2 { // a small event byte by byte goes through the decoder's buffers
				push(tt.in, len(buf))
				push("data: small\n\n", 1)
			}
			if len(kept) != 2 || strings.Join(small, "|") != "small|small" {
				t.Fatalf("%d big events kept, small ones %q", len(kept), small)
			}
			for i, k := range kept {
				if string(k) != tt.want {
					t.Errorf("big event %d: %d bytes kept, not the %d sent (changed since emitted)", i, len(k), len(tt.want))
				}
			}
		})
	}
}

// oneByteChunks cuts s into chunks of one byte.
func oneByteChunks(s string) [][]byte { return chunksOf([]byte(s), 1) }

func chunksOf(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

func TestAppendSSEEvent(t *testing.T) {
	tests := []struct {
		id, data, want string
	}{
		{"", `{"x":1}`, "data: {\"x\":1}\n\n"},
		{"3", `{}`, "id: 3\ndata: {}\n\n"},
		{"", "a\nb", "data: a\ndata: b\n\n"},
		{"", "a\r\nb", "data: a\ndata: b\n\n"},
		{"", "", "data: \n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := string(AppendSSEEvent(nil, tt.id, []byte(tt.data))); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := string(AppendSSEComment(nil, "ping")); got != ": ping\n\n" {
		t.Fatalf("comment: got %q", got)
	}
}

// FuzzSSEDecoder checks that chunking never changes what is decoded and
// that whatever the encoder writes decodes back to the same data.
func FuzzSSEDecoder(f *testing.F) {
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n: c\rid: 1\n\n"), uint8(3))
	f.Add([]byte("\xef\xbb\xbfdata:x\r"), uint8(1))
	f.Add([]byte("retry: 10\nevent: e\ndata\n\n"), uint8(7))
	f.Fuzz(func(t *testing.T, input []byte, size uint8) {
		whole := decodeAll(input)
		n := int(size%64) + 1
		chunks := chunksOf(input, n)
		if split := decodeAll(chunks...); strings.Join(split, "|") != strings.Join(whole, "|") {
			t.Fatalf("chunks of %d: %q, whole: %q", n, split, whole)
		}
		limit := int(size%16) + 1
		if a, b := decodeLimited(limit, input), decodeLimited(limit, chunks...); strings.Join(a, "|") != strings.Join(b, "|") {
			t.Fatalf("limit %d, chunks of %d: %q, whole: %q", limit, n, b, a)
		}
		data := bytes.NewBuffer(nil)
		for _, line := range bytes.FieldsFunc(input, func(r rune) bool { return r == '\r' || r == '\n' }) {
			data.Write(line)
			data.WriteByte('\n')
		}
		want := bytes.TrimSuffix(data.Bytes(), []byte("\n"))
		var got []byte
		var d SSEDecoder
		d.Push(AppendSSEEvent(nil, "", want), func(e *SSEEvent) { got = append([]byte{}, e.Data...) })
		if !bytes.Equal(got, want) {
			t.Fatalf("round trip: got %q, want %q", got, want)
		}
	})
}

func TestEnvelopeExchange(t *testing.T) {
	for _, tt := range []struct {
		env  *Envelope
		want string
		ok   bool
	}{
		{nil, "", false},
		{&Envelope{Method: "POST", Path: "/acp", Status: 200, Stream: StreamPOST}, "", false},
		{&Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: StreamHTTPControl}, "POST /acp 202 Accepted", true},
		{&Envelope{Method: "GET", Path: "/acp", Status: 101, Stream: StreamHTTPControl}, "GET /acp 101 Switching Protocols", true},
		{&Envelope{Method: "DELETE", Path: "/acp", Status: 599, Stream: StreamHTTPControl}, "DELETE /acp 599", true},
	} {
		if got, ok := tt.env.Exchange(); got != tt.want || ok != tt.ok {
			t.Errorf("%+v.Exchange() = %q, %v; want %q, %v", tt.env, got, ok, tt.want, tt.ok)
		}
	}
}

// TestSSEDecoderInChunk: an event is handed out as a slice of the chunk
// only when its one data line and its end came in that chunk; any other
// is in the decoder's memory, and InChunk must say which.
func TestSSEDecoderInChunk(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []bool // InChunk of each event, in order
	}{
		{"whole events", []string{"data: a\n\ndata: b\n\n"}, []bool{true, true}},
		{"an id before the data", []string{"id: 1\ndata: a\n\n"}, []bool{true}},
		{"data split across chunks", []string{"data: a", "bc\n\n"}, []bool{false}},
		{"end in the next chunk", []string{"data: a\n", "\n"}, []bool{false}},
		{"two data lines", []string{"data: a\ndata: b\n\n"}, []bool{false}},
		{"CRLF split between chunks", []string{"data: a\r", "\n\r\n"}, []bool{false}},
		{"a whole event after a split one", []string{"data: a", "\n\ndata: b\n\n"}, []bool{false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d SSEDecoder
			var got []bool
			for _, s := range tt.chunks {
				chunk := []byte(s)
				d.Push(chunk, func(e *SSEEvent) {
					got = append(got, e.InChunk)
					start := uintptr(unsafe.Pointer(unsafe.SliceData(chunk)))
					at := uintptr(unsafe.Pointer(unsafe.SliceData(e.Data)))
					within := at >= start && at < start+uintptr(len(chunk))
					if e.InChunk != within {
						t.Errorf("event %q: InChunk %v, but its data within the chunk: %v", e.Data, e.InChunk, within)
					}
				})
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("InChunk of the events: %v, want %v", got, tt.want)
			}
		})
	}
}
