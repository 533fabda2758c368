package proxy

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// TestBodyTapStaysEnded reads a request body through the tap to its end,
// then closes the server's body as net/http does once the response
// starts, and reads again, as the transport does to confirm the end of a
// Content-Length body. The tap must answer io.EOF: an error there made
// the transport drop the upstream connection in the middle of the
// response, and the client saw the stream cut.
func TestBodyTapStaysEnded(t *testing.T) {
	for _, tc := range []struct{ name, head, body string }{
		{"sized", "Content-Length: 5\r\n", "hello"},
		{"chunked", "Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := "POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + tc.head + "\r\n" + tc.body
			r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
			if err != nil {
				t.Fatal(err)
			}
			serverBody := r.Body
			rec := &netkit.Recorder{}
			ex := &exchange{rec: rec, req: r}
			tap := newBodyTap(ex, r, 1<<20)
			got, err := io.ReadAll(tap)
			if err != nil || string(got) != "hello" {
				t.Fatalf("read %q, %v; want \"hello\"", got, err)
			}
			serverBody.Close()
			if n, err := tap.Read(make([]byte, 16)); n != 0 || err != io.EOF {
				t.Fatalf("read after the server closed its ended body: %d, %v; want 0, io.EOF", n, err)
			}
			if size := tap.finish(); size != 5 {
				t.Fatalf("finish kept %d bytes, want 5", size)
			}
			if n, err := tap.Read(make([]byte, 16)); n != 0 || err != io.EOF {
				t.Fatalf("read after the exchange ended: %d, %v; want 0, io.EOF", n, err)
			}
			frames := rec.All()
			if len(frames) != 1 || frames[0].Body != "hello" {
				t.Fatalf("recorded %q, want the body once", rec.Lines())
			}
		})
	}
}

// TestBodyTapEndsWithItsExchange: once the exchange is over, a transport
// still sending a body it had not read to its end reads an error, not
// the server's body, which its handler has left.
func TestBodyTapEndsWithItsExchange(t *testing.T) {
	raw := "POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 11\r\n\r\nhello world"
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	rec := &netkit.Recorder{}
	tap := newBodyTap(&exchange{rec: rec, req: r}, r, 1<<20)
	if n, err := tap.Read(make([]byte, 5)); n != 5 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	if size := tap.finish(); size != 11 {
		t.Fatalf("finish kept %d bytes, want the whole body, 11", size)
	}
	if n, err := tap.Read(make([]byte, 16)); n != 0 || !errors.Is(err, errExchangeEnded) {
		t.Fatalf("read after the exchange ended: %d, %v; want 0, %v", n, err, errExchangeEnded)
	}
}
