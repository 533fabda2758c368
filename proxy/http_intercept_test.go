package proxy

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
)

// events decodes an SSE body as a client would: each event's type, id
// and data; comments and events cut off by the end are left out.
func events(body string) []string {
	var d wire.SSEDecoder
	var out []string
	d.Push([]byte(body), func(e *wire.SSEEvent) {
		if !e.Comment && e.Data != nil {
			out = append(out, fmt.Sprintf("event=%q id=%q data=%q", e.Event, e.ID, e.Data))
		}
	})
	return out
}

// interceptAll puts an interceptor that changes nothing on the proxy.
func interceptAll(o *HTTPProxyOptions) { o.Intercept = fault.New(fault.Options{}) }

// TestInterceptDialects drives the three server dialects through the
// proxy with an interceptor that changes nothing: each side must read
// the same messages, ids and event types the other sent (the framing of
// events is the proxy's own), each message recorded once with its
// envelope.
func TestInterceptDialects(t *testing.T) {
	for _, proto := range netkit.AllProtos {
		t.Run(string(proto)+"/rfd", func(t *testing.T) {
			up, rec, _, base, c := proxyPairWith(t, proto, "/acp", interceptAll)
			auth := map[string]string{"Authorization": "Bearer s3cret-token"}
			resp := netkit.Post(t, c, base+"/acp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, auth)
			if got := netkit.ReadAll(t, resp.Body); got != up.SentOn("POST initialize") || resp.Header.Get(acphttp.HeaderConnectionID) != "conn-1" {
				t.Fatalf("initialize: %q %v, upstream sent %q", got, resp.Header, up.SentOn("POST initialize"))
			}
			req, _ := http.NewRequest(http.MethodGet, base+"/acp", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set(acphttp.HeaderConnectionID, "conn-1")
			stream, err := c.Do(req)
			if err != nil || stream.StatusCode != 200 {
				t.Fatalf("GET stream: %v %v", err, stream)
			}
			got := make(chan string, 1)
			go func() { b, _ := io.ReadAll(stream.Body); got <- string(b) }()
			conn := map[string]string{acphttp.HeaderConnectionID: "conn-1"}
			resp = netkit.Post(t, c, base+"/acp", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/"}}`, conn)
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("session/new: %d %s", resp.StatusCode, netkit.ReadAll(t, resp.Body))
			}
			resp.Body.Close()
			waitRecorded(t, rec, `"sessionId":"s1"`)
			del, _ := http.NewRequest(http.MethodDelete, base+"/acp", nil)
			del.Header.Set(acphttp.HeaderConnectionID, "conn-1")
			if resp, err := c.Do(del); err != nil || resp.StatusCode != http.StatusAccepted {
				t.Fatalf("DELETE: %v %v", err, resp)
			}
			select {
			case s := <-got:
				if g, w := events(s), events(up.SentOn("GET")); !slices.Equal(g, w) || len(w) != 1 {
					t.Errorf("the client read events\n%q\nthe upstream sent\n%q", g, w)
				}
			case <-time.After(time.Minute):
				t.Fatal("GET stream did not end after DELETE")
			}
			checkRFDRecord(t, rec)
		})
		t.Run(string(proto)+"/goose", func(t *testing.T) {
			up, rec, _, base, c := proxyPairWith(t, proto, "/goose", interceptAll)
			resp := netkit.Post(t, c, base+"/goose", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, nil)
			if g, w := events(netkit.ReadAll(t, resp.Body)), events(up.SentOn("POST 1")); !slices.Equal(g, w) || len(w) != 2 {
				t.Fatalf("POST 1: the client read\n%q\nthe upstream sent\n%q", g, w)
			}
			netkit.ContainsAll(t, rec,
				`1 agent POST post-sse 200 {"jsonrpc":"2.0","method":"notice"}`,
				"1 agent POST post-sse 200 {\"jsonrpc\":\"2.0\",\n\"id\":1,\"result\":{}}",
			)
		})
		t.Run(string(proto)+"/rivet", func(t *testing.T) {
			up, rec, _, base, c := proxyPairWith(t, proto, "/v1/rpc", interceptAll)
			req, _ := http.NewRequest(http.MethodGet, base+"/v1/rpc", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Last-Event-ID", "5")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := netkit.ReadAll(t, resp.Body)
			if g, w := events(body), events(up.SentOn("GET")); !slices.Equal(g, w) || len(w) != 1 {
				t.Fatalf("the client read\n%q\nthe upstream sent\n%q", g, w)
			}
			if !strings.HasPrefix(body, "retry: 1000\n") {
				t.Errorf("the retry field did not pass: %q", body)
			}
			var partial int
			for _, f := range rec.All() {
				if f.Flags&wire.FlagPartial != 0 && f.Env.EventID == "7" {
					partial++
				}
			}
			if partial != 1 {
				t.Errorf("the cut event was recorded %d times, want once, flagged partial: %q", partial, rec.Lines())
			}
		})
	}
}

// waitRecorded waits until a recorded frame contains s.
func waitRecorded(t *testing.T, rec *netkit.Recorder, s string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(strings.Join(rec.Lines(), "\n"), s) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing recorded with %q within 1m: %q", s, rec.Lines())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestInterceptConnectionsBounded opens connection after connection
// (initialize without DELETE) under interception: the state the proxy
// keeps stays bounded.
func TestInterceptConnectionsBounded(t *testing.T) {
	_, _, p, base, c := proxyPairWith(t, netkit.H1, "/acp", interceptAll)
	for i := range icConnsLimit + 200 {
		resp := netkit.Post(t, c, base+"/acp", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{}}`, i), nil)
		netkit.ReadAll(t, resp.Body)
	}
	p.icMu.Lock()
	n := len(p.icConns)
	p.icMu.Unlock()
	if n > icConnsLimit {
		t.Errorf("the proxy keeps the state of %d connections, over its bound of %d", n, icConnsLimit)
	}
}

// TestInterceptBacklogBounded: agent messages waiting for an SSE stream
// that never opens are bounded in number and bytes, and what the bounds
// drop is said, not hidden.
func TestInterceptBacklogBounded(t *testing.T) {
	var warned []string
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: "http://127.0.0.1:1/acp", Intercept: fault.New(fault.Options{}),
		Warn: func(s string) { warned = append(warned, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tests := []struct {
		name        string
		count, size int
		kept        int
	}{
		{"count", backlogLimit + 76, 10, backlogLimit},
		{"bytes", 3, 25 << 20, 2},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			warned = nil
			h := p.httpConnFor(uint32(i + 1))
			for range tc.count {
				h.queue(make([]byte, tc.size))
			}
			h.mu.Lock()
			kept, waiting, dropped := len(h.backlog), h.waiting, h.dropped
			h.mu.Unlock()
			if kept != tc.kept || waiting != tc.kept*tc.size || dropped != tc.count-tc.kept {
				t.Errorf("kept %d (%d bytes), dropped %d; want %d kept of %d", kept, waiting, dropped, tc.kept, tc.count)
			}
			if len(warned) == 0 || !strings.Contains(warned[len(warned)-1], fmt.Sprintf("dropped the oldest waiting (%d so far)", tc.count-tc.kept)) {
				t.Errorf("warnings %q do not say what was dropped", warned)
			}
		})
	}
}
