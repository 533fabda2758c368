package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/gorilla/websocket"
)

// probe is one request a web page could make (through DNS rebinding, or
// from another site) or a client without the right token. In host and
// origin, PORT stands for the listener's port; host "" is the
// listener's own address.
type probe struct {
	method string // POST, GET (an SSE stream), DELETE or WS (an upgrade)
	host   string
	origin string
	token  string
}

const (
	evilHost   = "evil.example:PORT"
	evilOrigin = "http://evil.example:PORT"
	goodToken  = "tok-guard"
)

// send makes the request to base (http://HOST:PORT) and returns the
// status and body; a WebSocket that opened is closed at once.
func (p probe) send(t *testing.T, base string) (int, string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	h := http.Header{}
	if p.origin != "" {
		h.Set("Origin", strings.ReplaceAll(p.origin, "PORT", port))
	}
	if p.token != "" {
		h.Set("Authorization", "Bearer "+p.token)
	}
	host := strings.ReplaceAll(p.host, "PORT", port)
	if p.method == "WS" {
		if host != "" {
			h.Set("Host", host) // the dialer sends it as the request's Host
		}
		c, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/acp", h)
		if err == nil {
			c.Close()
			return resp.StatusCode, ""
		}
		if resp == nil {
			t.Fatalf("WebSocket to %s: %v", base, err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, readAll(t, resp.Body)
	}
	var body io.Reader
	switch p.method {
	case "POST":
		body = strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
		h.Set("Content-Type", ctJSON)
	case "GET":
		h.Set("Accept", "text/event-stream")
		h.Set(acphttp.HeaderConnectionID, "no-such-connection")
	case "DELETE":
		h.Set(acphttp.HeaderConnectionID, "no-such-connection")
	}
	req, _ := http.NewRequest(p.method, base+"/acp", body)
	req.Header = h
	if host != "" {
		req.Host = host
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", p.method, base, err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, readAll(t, resp.Body)
}

// refusedProbes are the requests every listener must refuse: from a
// rebound name, from another site's page, and without the token, for
// each kind of request. says is what the refusal must name.
func refusedProbes() []struct {
	name string
	p    probe
	want int
	says string
} {
	type row = struct {
		name string
		p    probe
		want int
		says string
	}
	var rows []row
	for _, m := range []string{"POST", "GET", "DELETE", "WS"} {
		rows = append(rows,
			row{m + " rebinding", probe{m, evilHost, evilOrigin, goodToken}, 403, `Host "evil.example:`},
			row{m + " rebound Host", probe{m, evilHost, "", goodToken}, 403, "--allow-host evil.example"},
			row{m + " another site", probe{m, "", evilOrigin, goodToken}, 403, "--allow-origin http://evil.example:"},
			row{m + " no token", probe{m, "", "", ""}, 401, "missing or wrong bearer token"},
			row{m + " wrong token", probe{m, "", "", "tok-wrong"}, 401, "missing or wrong bearer token"},
		)
	}
	return append(rows, row{"POST null origin", probe{"POST", "", "null", goodToken}, 403, `Origin "null"`})
}

// markerAgent wraps the test agent so that each start appends to a file:
// the proof that a request did, or did not, start an agent.
func markerAgent(t *testing.T) (argv []string, started func() int) {
	marker := filepath.Join(t.TempDir(), "started")
	argv = append([]string{"/bin/sh", "-c", `echo x >> "$0"; exec "$@"`, marker}, agentArgv("acp")...)
	return argv, func() int {
		b, _ := os.ReadFile(marker)
		return strings.Count(string(b), "x")
	}
}

// TestServeGuard sends serve the requests of DNS rebinding and of other
// sites' pages, and requests without the token: each is refused with
// the status that says why, before any agent starts, and recorded.
func TestServeGuard(t *testing.T) {
	argv, started := markerAgent(t)
	f := startServe(t, protoH1, func(o *ServeOptions) { o.Argv, o.AuthToken = argv, goodToken })
	for _, tt := range refusedProbes() {
		t.Run(tt.name, func(t *testing.T) {
			status, body := tt.p.send(t, f.http.URL)
			if status != tt.want || !strings.HasPrefix(body, "acpscope serve: refused: ") || !strings.Contains(body, tt.says) {
				t.Fatalf("got %d %q, want %d saying %q", status, body, tt.want, tt.says)
			}
			if n := started(); n != 0 || f.srv.Conns() != 0 {
				t.Fatalf("a refused request started %d agents (%d connections)", n, f.srv.Conns())
			}
		})
	}
	for _, want := range []int{401, 403} {
		if !recorded(f.rec, want) {
			t.Errorf("no %d recorded", want)
		}
	}
}

func recorded(rec *memRecorder, status int) bool {
	for _, fr := range rec.all() {
		if fr.Env.Status == status {
			return true
		}
	}
	return false
}

// TestServeGuardAllows checks that what the allow-lists allow still
// works: a loopback name, --allow-host, --allow-origin and a page of
// serve's own origin, over POST and WebSocket, each starting its agent.
func TestServeGuardAllows(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*ServeOptions)
		p    probe
		want int
	}{
		{"POST as localhost", nil, probe{"POST", "localhost:PORT", "", goodToken}, 200},
		{"WS as localhost", nil, probe{"WS", "localhost:PORT", "", goodToken}, 101},
		{"POST from our own page", nil, probe{"POST", "", "http://127.0.0.1:PORT", goodToken}, 200},
		{"WS from our own page", nil, probe{"WS", "", "http://127.0.0.1:PORT", goodToken}, 101},
		{"POST with --allow-host", func(o *ServeOptions) { o.AllowHosts = []string{"evil.example"} }, probe{"POST", evilHost, "", goodToken}, 200},
		{"WS with --allow-host", func(o *ServeOptions) { o.AllowHosts = []string{"evil.example"} }, probe{"WS", evilHost, evilOrigin, goodToken}, 101},
		{"POST with --allow-origin", func(o *ServeOptions) { o.AllowOrigins = []string{"http://app.example"} }, probe{"POST", "", "http://app.example", goodToken}, 200},
		{"WS with --allow-origin", func(o *ServeOptions) { o.AllowOrigins = []string{"http://app.example"} }, probe{"WS", "", "http://app.example", goodToken}, 101},
		{"GET reaches the routing", nil, probe{"GET", "localhost:PORT", "", goodToken}, 404},
		{"DELETE reaches the routing", nil, probe{"DELETE", "localhost:PORT", "", goodToken}, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, started := markerAgent(t)
			f := startServe(t, protoH1, func(o *ServeOptions) {
				o.Argv, o.AuthToken = argv, goodToken
				if tt.mod != nil {
					tt.mod(o)
				}
			})
			status, body := tt.p.send(t, f.http.URL)
			if status != tt.want {
				t.Fatalf("got %d %q, want %d", status, body, tt.want)
			}
			if tt.want == 200 || tt.want == 101 {
				waitLong(t, "the agent to start", func() bool { return started() == 1 })
			}
		})
	}
}

// countingUpstream is an upstream that counts the connections made to
// it and keeps the headers of each request; it answers initialize with
// 200 and WebSocket upgrades with 101.
type countingUpstream struct {
	srv   *httptest.Server
	conns atomic.Int32
	mu    sync.Mutex
	seen  []http.Header
}

func startCountingUpstream(t *testing.T) *countingUpstream {
	u := &countingUpstream{}
	up := websocket.Upgrader{}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Header.Clone())
		u.mu.Unlock()
		if websocket.IsWebSocketUpgrade(r) {
			if c, err := up.Upgrade(w, r, nil); err == nil {
				c.Close()
			}
			return
		}
		w.Header().Set("Content-Type", ctJSON)
		w.Header().Set(acphttp.HeaderConnectionID, "up-1")
		io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`)
	}))
	u.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.conns.Add(1)
		}
	}
	u.srv.Start()
	t.Cleanup(u.srv.Close)
	return u
}

func (u *countingUpstream) last() http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.seen) == 0 {
		return nil
	}
	return u.seen[len(u.seen)-1]
}

func startGuardedProxy(t *testing.T, up *countingUpstream, mod func(*HTTPProxyOptions)) (*httptest.Server, *memRecorder) {
	rec := &memRecorder{}
	opts := HTTPProxyOptions{Upstream: up.srv.URL + "/acp", Recorder: rec, AuthToken: goodToken}
	if mod != nil {
		mod(&opts)
	}
	p, err := NewHTTPProxy(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return startServer(t, protoH1, p), rec
}

// TestHTTPProxyGuard sends proxy the same requests: each is refused and
// recorded, and not one connection reaches the upstream.
func TestHTTPProxyGuard(t *testing.T) {
	up := startCountingUpstream(t)
	front, rec := startGuardedProxy(t, up, nil)
	for _, tt := range refusedProbes() {
		t.Run(tt.name, func(t *testing.T) {
			status, body := tt.p.send(t, front.URL)
			if status != tt.want || !strings.HasPrefix(body, "acpscope proxy: refused: ") || !strings.Contains(body, tt.says) {
				t.Fatalf("got %d %q, want %d saying %q", status, body, tt.want, tt.says)
			}
			if n := up.conns.Load(); n != 0 {
				t.Fatalf("%d connections reached the upstream", n)
			}
		})
	}
	for _, want := range []int{401, 403} {
		if !recorded(rec, want) {
			t.Errorf("no %d recorded", want)
		}
	}
	for _, fr := range rec.all() {
		if strings.Contains(fr.Env.Headers["authorization"], goodToken) {
			t.Errorf("token recorded in clear: %+v", fr.Env.Headers)
		}
	}
}

// TestHTTPProxyGuardAllows checks what reaches the upstream, and with
// which Origin and Authorization: a page of the proxy's own origin
// arrives as one of the upstream's (the upstream sees its own Host), an
// allowed other origin unchanged; the client's token passes unless an
// upstream token replaces it.
func TestHTTPProxyGuardAllows(t *testing.T) {
	tests := []struct {
		name       string
		mod        func(*HTTPProxyOptions)
		p          probe
		want       int
		origin     string // as the upstream must see it; UP is its port
		authorized string // as the upstream must see it
	}{
		{"POST as localhost", nil, probe{"POST", "localhost:PORT", "", goodToken}, 200, "", "Bearer " + goodToken},
		{"POST from the proxy's page", nil, probe{"POST", "", "http://127.0.0.1:PORT", goodToken}, 200, "http://127.0.0.1:UP", "Bearer " + goodToken},
		{"WS from the proxy's page", nil, probe{"WS", "", "http://127.0.0.1:PORT", goodToken}, 101, "http://127.0.0.1:UP", "Bearer " + goodToken},
		{"POST with --allow-host", func(o *HTTPProxyOptions) { o.AllowHosts = []string{"evil.example"} }, probe{"POST", evilHost, "", goodToken}, 200, "", "Bearer " + goodToken},
		{"POST with --allow-origin", func(o *HTTPProxyOptions) { o.AllowOrigins = []string{"http://app.example"} },
			probe{"POST", "", "http://app.example", goodToken}, 200, "http://app.example", "Bearer " + goodToken},
		{"POST with an upstream token", func(o *HTTPProxyOptions) { o.UpstreamAuthToken = "up-key" }, probe{"POST", "", "", goodToken}, 200, "", "Bearer up-key"},
		{"WS with an upstream token", func(o *HTTPProxyOptions) { o.UpstreamAuthToken = "up-key" }, probe{"WS", "", "", goodToken}, 101, "", "Bearer up-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := startCountingUpstream(t)
			front, rec := startGuardedProxy(t, up, tt.mod)
			status, body := tt.p.send(t, front.URL)
			if status != tt.want {
				t.Fatalf("got %d %q, want %d", status, body, tt.want)
			}
			h := up.last()
			_, upPort, _ := net.SplitHostPort(strings.TrimPrefix(up.srv.URL, "http://"))
			if got, want := h.Get("Origin"), strings.ReplaceAll(tt.origin, "UP", upPort); got != want {
				t.Errorf("upstream saw Origin %q, want %q", got, want)
			}
			if got := h.Get("Authorization"); got != tt.authorized {
				t.Errorf("upstream saw Authorization %q, want %q", got, tt.authorized)
			}
			// The capture holds what the client sent, fingerprinted.
			waitLong(t, "a recorded frame", func() bool { return len(rec.all()) > 0 })
			for _, fr := range rec.all() {
				if a := fr.Env.Headers["authorization"]; a != "" && a != "Bearer "+acphttp.Fingerprint(goodToken) {
					t.Errorf("recorded Authorization %q, want the client's token fingerprinted", a)
				}
			}
		})
	}
}

// TestHTTPProxySameOriginServe is the page of the proxy's own origin in
// front of a real serve: serve checks Origin against the Host it sees,
// the upstream's, so the proxy must hand it the upstream's origin.
func TestHTTPProxySameOriginServe(t *testing.T) {
	f := startServe(t, protoH1, nil)
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: f.url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	front := startServer(t, protoH1, p)
	for _, m := range []string{"POST", "WS"} {
		t.Run(m, func(t *testing.T) {
			want := map[string]int{"POST": 200, "WS": 101}[m]
			if status, body := (probe{m, "", "http://127.0.0.1:PORT", ""}).send(t, front.URL); status != want {
				t.Fatalf("got %d %q, want %d", status, body, want)
			}
		})
	}
}
