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
	return s
}

// decodeAll decodes chunks as a reverse proxy hands them over: each in
// the same reused buffer, scribbled over once Push returns, so that an
// event that kept a piece of an earlier chunk shows it.
func decodeAll(chunks ...[]byte) []string {
	var d SSEDecoder
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
			var chunks [][]byte
			for i := range len(tt.in) {
				chunks = append(chunks, []byte{tt.in[i]})
			}
			if got1 := decodeAll(chunks...); strings.Join(got1, "|") != strings.Join(tt.want, "|") {
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
