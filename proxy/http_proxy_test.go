package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
)

// proxyPair starts a fake upstream and a recording proxy in front of it,
// both speaking proto, and returns the proxy's base URL and a client.
func proxyPair(t *testing.T, proto netkit.Proto, upstreamPath string) (*netkit.FakeUpstream, *netkit.Recorder, string, *http.Client) {
	up, rec, _, base, c := proxyPairWith(t, proto, upstreamPath, nil)
	return up, rec, base, c
}

// proxyPairWith is proxyPair with options changed by mod; it also
// returns the proxy.
func proxyPairWith(t *testing.T, proto netkit.Proto, upstreamPath string, mod func(*HTTPProxyOptions)) (*netkit.FakeUpstream, *netkit.Recorder, *HTTPProxy, string, *http.Client) {
	t.Helper()
	up := netkit.NewFakeUpstream()
	upSrv := netkit.StartServer(t, proto, up)
	rec := &netkit.Recorder{}
	opts := HTTPProxyOptions{Upstream: upSrv.URL + upstreamPath, Recorder: rec, UnsafeUpstreamInsecure: true}
	if mod != nil {
		mod(&opts)
	}
	p, err := NewHTTPProxy(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	front := netkit.StartServer(t, proto, p)
	c := netkit.ClientFor(t, proto, front)
	jar, _ := cookiejar.New(nil)
	c.Jar = jar
	return up, rec, p, front.URL, c
}

// TestHTTPProxyRFD drives the RFD's flow through the proxy over each
// protocol and checks that the client received exactly the bytes the
// upstream sent and that every message was recorded with its envelope.
func TestHTTPProxyRFD(t *testing.T) {
	for _, proto := range netkit.AllProtos {
		t.Run(string(proto), func(t *testing.T) {
			up, rec, base, c := proxyPair(t, proto, "/acp")
			auth := map[string]string{"Authorization": "Bearer s3cret-token"}
			resp := netkit.Post(t, c, base+"/acp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, auth)
			initBody := netkit.ReadAll(t, resp.Body)
			if resp.StatusCode != 200 || resp.Header.Get(acphttp.HeaderConnectionID) != "conn-1" {
				t.Fatalf("initialize: %d %v", resp.StatusCode, resp.Header)
			}
			if initBody != up.SentOn("POST initialize") {
				t.Fatalf("initialize body %q, upstream sent %q", initBody, up.SentOn("POST initialize"))
			}
			if resp.ProtoMajor != netkit.WantProto(proto) {
				t.Errorf("client spoke HTTP/%d, want %d", resp.ProtoMajor, netkit.WantProto(proto))
			}
			conn := map[string]string{acphttp.HeaderConnectionID: "conn-1"}
			req, _ := http.NewRequest(http.MethodGet, base+"/acp", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set(acphttp.HeaderConnectionID, "conn-1")
			stream, err := c.Do(req)
			if err != nil || stream.StatusCode != 200 {
				t.Fatalf("GET stream: %v %v", err, stream)
			}
			got := make(chan string, 1)
			go func() { b, _ := io.ReadAll(stream.Body); got <- string(b) }()

			resp = netkit.Post(t, c, base+"/acp", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/"}}`, conn)
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("session/new: %d %s", resp.StatusCode, netkit.ReadAll(t, resp.Body))
			}
			resp.Body.Close()
			time.Sleep(50 * time.Millisecond) // let the event pass before the stream ends
			del, _ := http.NewRequest(http.MethodDelete, base+"/acp", nil)
			del.Header.Set(acphttp.HeaderConnectionID, "conn-1")
			if resp, err := c.Do(del); err != nil || resp.StatusCode != http.StatusAccepted {
				t.Fatalf("DELETE: %v %v", err, resp)
			}
			select {
			case s := <-got:
				if s != up.SentOn("GET") {
					t.Fatalf("GET stream bytes differ:\n got %q\nsent %q", s, up.SentOn("GET"))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("GET stream did not end after DELETE")
			}
			checkRFDRecord(t, rec)
			netkit.CheckRecordedProto(t, rec, proto)
			for i, major := range up.Protos() {
				if major != netkit.WantProto(proto) {
					t.Errorf("upstream request %d arrived over HTTP/%d, want HTTP/%d", i, major, netkit.WantProto(proto))
				}
			}
		})
	}
}

func checkRFDRecord(t *testing.T, rec *netkit.Recorder) {
	t.Helper()
	netkit.ContainsAll(t, rec,
		`1 client POST post 0 {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`1 agent POST post-reply 200 {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`,
		`1 agent GET http 200 `,
		`1 client POST post 0 {"jsonrpc":"2.0","id":2,"method":"session/new"`,
		`1 agent POST http 202 `,
		"1 agent GET sse-conn 200 {\"jsonrpc\":\"2.0\",\n\"id\":2,\"result\":{\"sessionId\":\"s1\"}}",
		`1 agent DELETE http 202 `,
	)
	for _, f := range rec.All() {
		for k, v := range f.Env.Headers {
			if strings.Contains(v, "s3cret") || strings.Contains(v, "node-7") {
				t.Errorf("credential stored in clear: %s: %s", k, v)
			}
		}
		if f.Env.Stream == wire.StreamConnection && f.Env.EventID != "1" {
			t.Errorf("event id %q, want 1", f.Env.EventID)
		}
	}
	first := rec.All()[0]
	if !strings.HasPrefix(first.Env.Headers["authorization"], "Bearer <redacted:hmac:") {
		t.Errorf("authorization recorded as %q", first.Env.Headers["authorization"])
	}
}

// TestHTTPProxyGoose checks goose's older dialect: one Acp-Session-Id
// header as the connection id and SSE answered on POST.
func TestHTTPProxyGoose(t *testing.T) {
	for _, proto := range netkit.AllProtos {
		t.Run(string(proto), func(t *testing.T) {
			up, rec, base, c := proxyPair(t, proto, "/goose")
			resp := netkit.Post(t, c, base+"/goose", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, nil)
			if got := netkit.ReadAll(t, resp.Body); got != up.SentOn("POST 1") {
				t.Fatalf("POST 1 bytes: got %q, sent %q", got, up.SentOn("POST 1"))
			}
			sid := resp.Header.Get(acphttp.HeaderSessionID)
			resp = netkit.Post(t, c, base+"/goose", `{"jsonrpc":"2.0","id":2,"method":"session/new"}`, map[string]string{acphttp.HeaderSessionID: sid})
			if got := netkit.ReadAll(t, resp.Body); got != up.SentOn("POST 2") {
				t.Fatalf("POST 2 bytes: got %q, sent %q", got, up.SentOn("POST 2"))
			}
			netkit.ContainsAll(t, rec,
				`1 agent POST post-sse 200 {"jsonrpc":"2.0","method":"notice"}`,
				"1 agent POST post-sse 200 {\"jsonrpc\":\"2.0\",\n\"id\":1,\"result\":{}}",
				`1 client POST post 0 {"jsonrpc":"2.0","id":2,"method":"session/new"}`,
				"1 agent POST post-sse 200 {\"jsonrpc\":\"2.0\",\n\"id\":2,\"result\":{}}",
			)
		})
	}
}

// TestHTTPProxyRivet checks a GET resumed with Last-Event-ID on rivet's
// path, and that an event cut off by the end of the stream is recorded
// flagged partial.
func TestHTTPProxyRivet(t *testing.T) {
	for _, proto := range netkit.AllProtos {
		t.Run(string(proto), func(t *testing.T) {
			up, rec, base, c := proxyPair(t, proto, "/v1/rpc")
			req, _ := http.NewRequest(http.MethodGet, base+"/v1/rpc", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Last-Event-ID", "5")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := netkit.ReadAll(t, resp.Body); got != up.SentOn("GET") {
				t.Fatalf("bytes: got %q, sent %q", got, up.SentOn("GET"))
			}
			var sawResume, sawPartial bool
			for _, f := range rec.All() {
				if f.Env.Headers["last-event-id"] == "5" {
					sawResume = true
				}
				if f.Env.EventID == "6" && !strings.Contains(f.Body, `"last":"5"`) {
					t.Errorf("event 6 recorded as %q", f.Body)
				}
				if f.Flags&wire.FlagPartial != 0 && f.Env.EventID == "7" {
					sawPartial = true
				}
			}
			if !sawResume || !sawPartial {
				t.Errorf("resume header recorded: %v, cut event flagged: %v; frames %q", sawResume, sawPartial, rec.Lines())
			}
		})
	}
}

// TestHTTPProxyPassThrough checks that other paths are forwarded and not
// recorded.
func TestHTTPProxyPassThrough(t *testing.T) {
	_, rec, base, c := proxyPair(t, netkit.H1, "/acp")
	resp, err := c.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	if got := netkit.ReadAll(t, resp.Body); got != "ok" {
		t.Fatalf("/health: %q", got)
	}
	if n := len(rec.All()); n != 0 {
		t.Fatalf("/health recorded %d frames", n)
	}
}

// TestHTTPProxyUpstreamDown checks the 502 and its record.
func TestHTTPProxyUpstreamDown(t *testing.T) {
	addr := netkit.FreeAddr(t)
	rec := &netkit.Recorder{}
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: "http://" + addr + "/acp", Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	resp, err := http.Post(front.URL+"/acp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	if err != nil {
		t.Fatal(err)
	}
	body := netkit.ReadAll(t, resp.Body)
	want := "acpscope: upstream http://" + addr + "/acp unreachable: connection refused\n"
	if resp.StatusCode != http.StatusBadGateway || body != want {
		t.Fatalf("got %d %q, want 502 %q", resp.StatusCode, body, want)
	}
	netkit.ContainsAll(t, rec,
		`1 client POST post 0 {"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`1 agent POST http 502 `+want)
}

// TestHTTPProxyOrigin checks that a browser page from another origin is
// refused unless allowed.
func TestHTTPProxyOrigin(t *testing.T) {
	up := netkit.StartServer(t, netkit.H1, netkit.NewFakeUpstream())
	tests := []struct {
		origin  string
		allowed []string
		want    int
	}{
		{"", nil, 200},
		{"http://evil.example", nil, 403},
		{"null", nil, 403},
		{"http://evil.example", []string{"http://evil.example"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.origin, func(t *testing.T) {
			p, _ := NewHTTPProxy(HTTPProxyOptions{Upstream: up.URL + "/acp", AllowOrigins: tt.allowed})
			front := httptest.NewServer(p)
			defer front.Close()
			req, _ := http.NewRequest(http.MethodGet, front.URL+"/health", nil)
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

// TestHTTPProxyUpstreamProtocol checks that an h2c client can reach an
// HTTP/1.1-only upstream when told, and what auto does otherwise.
func TestHTTPProxyUpstreamProtocol(t *testing.T) {
	up := netkit.NewFakeUpstream()
	upSrv := netkit.StartServer(t, netkit.H1, up)
	for _, tt := range []struct {
		proto string
		want  int
	}{{"http1", 200}, {"auto", 502}} {
		t.Run(tt.proto, func(t *testing.T) {
			p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL + "/acp", UpstreamProtocol: tt.proto})
			if err != nil {
				t.Fatal(err)
			}
			front := netkit.StartServer(t, netkit.H2C, p)
			resp := netkit.Post(t, netkit.ClientFor(t, netkit.H2C, front), front.URL+"/acp", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, nil)
			netkit.ReadAll(t, resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	if _, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL, UpstreamProtocol: "spdy"}); err == nil {
		t.Fatal("an unknown upstream protocol was accepted")
	}
}

// TestHTTPProxyCompressed checks that a compressed stream passes byte for
// byte and is recorded as an opening only, saying why.
func TestHTTPProxyCompressed(t *testing.T) {
	var sent bytes.Buffer
	zw := gzip.NewWriter(&sent)
	io.WriteString(zw, "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n")
	zw.Close()
	up := netkit.StartServer(t, netkit.H1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(sent.Bytes())
	}))
	rec := &netkit.Recorder{}
	p, _ := NewHTTPProxy(HTTPProxyOptions{Upstream: up.URL + "/acp", Recorder: rec})
	front := netkit.StartServer(t, netkit.H1, p)
	req, _ := http.NewRequest(http.MethodGet, front.URL+"/acp", nil)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: Go then leaves the body compressed
	resp, err := netkit.ClientFor(t, netkit.H1, front).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := netkit.ReadAll(t, resp.Body); got != sent.String() {
		t.Fatalf("client got %q, upstream sent %q", got, sent.String())
	}
	netkit.WaitLong(t, "a recorded frame", func() bool { return len(rec.All()) > 0 })
	frames := rec.All()
	if len(frames) != 1 || frames[0].Env.Headers["content-encoding"] != "gzip" || frames[0].Env.Stream != wire.StreamHTTPControl {
		t.Fatalf("recorded %+v", frames)
	}
}
