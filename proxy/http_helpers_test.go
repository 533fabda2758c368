package proxy

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// memRecorder keeps frames in memory, as a capture.Writer would store
// them, and the bytes of each stream (an agent's stderr), so tests can
// check what was recorded.
type memRecorder struct {
	mu      sync.Mutex
	frames  []memFrame
	streams map[streamKey][]byte
	ended   map[streamKey]bool
}

type streamKey struct {
	conn uint32
	s    capture.Stream
}

type memFrame struct {
	Conn  uint32
	Dir   wire.Dir
	Body  string
	Flags wire.Flags
	Env   wire.Envelope
}

func (m *memRecorder) Frame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := memFrame{Conn: conn, Dir: dir, Body: string(b), Flags: flags}
	if env != nil {
		f.Env = *env
	}
	m.frames = append(m.frames, f)
}

func (m *memRecorder) TakeFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	m.Frame(conn, dir, t, b, flags, env)
}

func (m *memRecorder) Chunk(conn uint32, s capture.Stream, t int64, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.streams == nil {
		m.streams = map[streamKey][]byte{}
	}
	k := streamKey{conn, s}
	m.streams[k] = append(m.streams[k], b...)
}

func (m *memRecorder) EndStream(conn uint32, s capture.Stream, t int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended == nil {
		m.ended = map[streamKey]bool{}
	}
	m.ended[streamKey{conn, s}] = true
}

// stream returns what stream s of conn recorded, and whether it ended.
func (m *memRecorder) stream(conn uint32, s capture.Stream) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := streamKey{conn, s}
	return string(m.streams[k]), m.ended[k]
}

func (m *memRecorder) all() []memFrame {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]memFrame(nil), m.frames...)
}

// messages returns "dir stream status body" for every frame, in order.
func (m *memRecorder) lines() []string {
	var out []string
	for _, f := range m.all() {
		out = append(out, fmt.Sprintf("%d %s %s %s %d %s", f.Conn, f.Dir, f.Env.Method, f.Env.Stream, f.Env.Status, f.Body))
	}
	return out
}

// protocol is how a test client and server talk.
type protocol string

const (
	protoH1  protocol = "h1"
	protoH2C protocol = "h2c"
	protoTLS protocol = "tls"
)

var allProtocols = []protocol{protoH1, protoH2C, protoTLS}

// startServer starts h on a loopback httptest server speaking proto.
func startServer(t testing.TB, proto protocol, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	switch proto {
	case protoH2C:
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		s.Config.Protocols = &p
		s.Start()
	case protoTLS:
		s.EnableHTTP2 = true
		s.StartTLS()
	default:
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// clientFor returns an HTTP client speaking proto to s: HTTP/1.1 only,
// cleartext HTTP/2 with prior knowledge only, or TLS with h2 via ALPN.
func clientFor(t testing.TB, proto protocol, s *httptest.Server) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	var p http.Protocols
	switch proto {
	case protoH2C:
		p.SetUnencryptedHTTP2(true)
	case protoTLS:
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

// wantProto is the protocol major version a request over proto arrives with.
func wantProto(proto protocol) int {
	if proto == protoH1 {
		return 1
	}
	return 2
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// containsAll checks that the recorder holds frames starting with each of
// want, waiting a little: a response is recorded as its handler returns,
// which may be just after the client has it.
func containsAll(t *testing.T, rec *memRecorder, want ...string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		joined := strings.Join(rec.lines(), "\n")
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(joined, w)
		}
		if !missing || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	joined := strings.Join(rec.lines(), "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("recorded frames lack %q; got:\n%s", w, joined)
		}
	}
}

// checkRecordedProto checks that every frame's envelope names the HTTP
// version a client speaking proto used.
func checkRecordedProto(t *testing.T, rec *memRecorder, proto protocol) {
	t.Helper()
	want := "HTTP/2.0"
	if proto == protoH1 {
		want = "HTTP/1.1"
	}
	for _, f := range rec.all() {
		if f.Env.Proto != want {
			t.Fatalf("frame %s %s %d recorded with HTTP version %q, want %s", f.Env.Method, f.Env.Stream, f.Env.Status, f.Env.Proto, want)
		}
	}
}
