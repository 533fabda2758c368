package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/bridge"
	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/gorilla/websocket"
)

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
		w.Header().Set("Content-Type", netkit.CTJSON)
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

func startGuardedProxy(t *testing.T, up *countingUpstream, mod func(*HTTPProxyOptions)) (*httptest.Server, *netkit.Recorder) {
	rec := &netkit.Recorder{}
	opts := HTTPProxyOptions{Upstream: up.srv.URL + "/acp", Recorder: rec, AuthToken: netkit.GoodToken}
	if mod != nil {
		mod(&opts)
	}
	p, err := NewHTTPProxy(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return netkit.StartServer(t, netkit.H1, p), rec
}

// TestHTTPProxyGuard sends proxy the same requests: each is refused and
// recorded, and not one connection reaches the upstream.
func TestHTTPProxyGuard(t *testing.T) {
	up := startCountingUpstream(t)
	front, rec := startGuardedProxy(t, up, nil)
	for _, tt := range netkit.RefusedProbes() {
		t.Run(tt.Name, func(t *testing.T) {
			status, body := tt.P.Send(t, front.URL)
			if status != tt.Want || !strings.HasPrefix(body, "acpscope proxy: refused: ") || !strings.Contains(body, tt.Says) {
				t.Fatalf("got %d %q, want %d saying %q", status, body, tt.Want, tt.Says)
			}
			if n := up.conns.Load(); n != 0 {
				t.Fatalf("%d connections reached the upstream", n)
			}
		})
	}
	for _, want := range []int{401, 403} {
		if !rec.HasStatus(want) {
			t.Errorf("no %d recorded", want)
		}
	}
	for _, fr := range rec.All() {
		if strings.Contains(fr.Env.Headers["authorization"], netkit.GoodToken) {
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
		p          netkit.Probe
		want       int
		origin     string // as the upstream must see it; UP is its port
		authorized string // as the upstream must see it
	}{
		{"POST as localhost", nil, netkit.NewProbe("POST", "localhost:PORT", "", netkit.GoodToken), 200, "", "Bearer " + netkit.GoodToken},
		{"POST from the proxy's page", nil, netkit.NewProbe("POST", "", "http://127.0.0.1:PORT", netkit.GoodToken), 200, "http://127.0.0.1:UP", "Bearer " + netkit.GoodToken},
		{"WS from the proxy's page", nil, netkit.NewProbe("WS", "", "http://127.0.0.1:PORT", netkit.GoodToken), 101, "http://127.0.0.1:UP", "Bearer " + netkit.GoodToken},
		{"POST with --allow-host", func(o *HTTPProxyOptions) { o.AllowHosts = []string{"evil.example"} }, netkit.NewProbe("POST", netkit.EvilHost, "", netkit.GoodToken), 200, "", "Bearer " + netkit.GoodToken},
		{"POST with --allow-origin", func(o *HTTPProxyOptions) { o.AllowOrigins = []string{"http://app.example"} },
			netkit.NewProbe("POST", "", "http://app.example", netkit.GoodToken), 200, "http://app.example", "Bearer " + netkit.GoodToken},
		{"POST with an upstream token", func(o *HTTPProxyOptions) { o.UpstreamAuthToken = "up-key" }, netkit.NewProbe("POST", "", "", netkit.GoodToken), 200, "", "Bearer up-key"},
		{"WS with an upstream token", func(o *HTTPProxyOptions) { o.UpstreamAuthToken = "up-key" }, netkit.NewProbe("WS", "", "", netkit.GoodToken), 101, "", "Bearer up-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := startCountingUpstream(t)
			front, rec := startGuardedProxy(t, up, tt.mod)
			status, body := tt.p.Send(t, front.URL)
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
			netkit.WaitLong(t, "a recorded frame", func() bool { return len(rec.All()) > 0 })
			for _, fr := range rec.All() {
				if a := fr.Env.Headers["authorization"]; a != "" && a != "Bearer "+acphttp.Fingerprint(netkit.GoodToken) {
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
	srv, err := bridge.NewServer(bridge.ServeOptions{Argv: agentArgv("acp"), Agent: agent.Options{Grace: 500 * time.Millisecond},
		KeepAlive: -1, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	up := netkit.StartServer(t, netkit.H1, srv)
	t.Cleanup(func() { srv.Close() })
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: up.URL + "/acp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	front := netkit.StartServer(t, netkit.H1, p)
	for _, m := range []string{"POST", "WS"} {
		t.Run(m, func(t *testing.T) {
			want := map[string]int{"POST": 200, "WS": 101}[m]
			if status, body := (netkit.NewProbe(m, "", "http://127.0.0.1:PORT", "")).Send(t, front.URL); status != want {
				t.Fatalf("got %d %q, want %d", status, body, want)
			}
		})
	}
}
