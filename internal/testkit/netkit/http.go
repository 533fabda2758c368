package netkit

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Proto is how a test client and server talk.
type Proto string

// The HTTP versions the transports speak.
const (
	H1  Proto = "h1"  // HTTP/1.1
	H2C Proto = "h2c" // cleartext HTTP/2 with prior knowledge
	TLS Proto = "tls" // HTTPS, HTTP/2 through ALPN
)

// AllProtos lists every Proto, for tables.
var AllProtos = []Proto{H1, H2C, TLS}

// CTJSON is the Content-Type of a JSON-RPC POST.
const CTJSON = "application/json"

// StartServer starts h on a loopback httptest server speaking proto; it
// is closed at cleanup.
func StartServer(t testing.TB, proto Proto, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	switch proto {
	case H2C:
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		s.Config.Protocols = &p
		s.Start()
	case TLS:
		s.EnableHTTP2 = true
		s.StartTLS()
	default:
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// ClientFor returns an HTTP client speaking proto to s: HTTP/1.1 only,
// cleartext HTTP/2 with prior knowledge only, or TLS with h2 via ALPN.
func ClientFor(t testing.TB, proto Proto, s *httptest.Server) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	var p http.Protocols
	switch proto {
	case H2C:
		p.SetUnencryptedHTTP2(true)
	case TLS:
		p.SetHTTP2(true)
		p.SetHTTP1(true)
		tr.TLSClientConfig = &tls.Config{RootCAs: s.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	default:
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// WantProto is the protocol major version a request over proto arrives with.
func WantProto(proto Proto) int {
	if proto == H1 {
		return 1
	}
	return 2
}

// FreeAddr returns a loopback address nothing listens on.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Post sends a JSON POST with the headers in h.
func Post(t *testing.T, c *http.Client, url, body string, h map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", CTJSON)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	return resp
}

// ReadAll reads r to its end.
func ReadAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	return string(b)
}

// Notification returns a JSON-RPC notification of exactly n bytes.
func Notification(n int) string {
	head, tail := `{"jsonrpc":"2.0","method":"x/blob","params":{"data":"`, `"}}`
	return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
}

// unsized hides a body's length, so the client sends it chunked.
type unsized struct{ io.Reader }

// PostBody POSTs body, with its Content-Length or chunked, with headers
// given as name, value pairs, and returns the status and the answer's
// text.
func PostBody(t *testing.T, c *http.Client, url, body string, sized bool, hv ...string) (int, string) {
	t.Helper()
	var rd io.Reader = strings.NewReader(body)
	if !sized {
		rd = unsized{rd}
	}
	req, _ := http.NewRequest(http.MethodPost, url, rd)
	req.Header.Set("Content-Type", CTJSON)
	for i := 0; i+1 < len(hv); i += 2 {
		req.Header.Set(hv[i], hv[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST of %d bytes: %v", len(body), err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, ReadAll(t, resp.Body)
}

// WSClose reads until the socket closes and returns the close error.
func WSClose(t *testing.T, ws *websocket.Conn) *websocket.CloseError {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(CondWait))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("socket ended without a close frame: %v", err)
			}
			return ce
		}
	}
}
