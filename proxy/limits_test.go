package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

const limit1K = 1024

// limitUpstream is an upstream for the proxy's limit tests: it counts
// the POST bytes it receives, holds GETs open until the client leaves,
// and echoes WebSocket messages, answering "big" with a message of
// bigReply bytes.
type limitUpstream struct {
	posts, postBytes atomic.Int64
	bigReply         int
}

func (u *limitUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case websocket.IsWebSocketUpgrade(r):
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			mt, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if string(msg) == "big" {
				msg = []byte(netkit.Notification(u.bigReply))
			}
			ws.WriteMessage(mt, msg)
		}
	case r.Method == http.MethodPost:
		n, err := io.Copy(io.Discard, r.Body)
		u.postBytes.Add(n)
		if err != nil {
			return
		}
		u.posts.Add(1)
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
}

func startLimitProxy(t *testing.T, up http.Handler, opts HTTPProxyOptions) (*HTTPProxy, *netkit.Recorder, string) {
	t.Helper()
	upSrv := netkit.StartServer(t, netkit.H1, up)
	rec := &netkit.Recorder{}
	opts.Upstream, opts.Recorder = upSrv.URL+"/acp", rec
	p, err := NewHTTPProxy(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, rec, netkit.StartServer(t, netkit.H1, p).URL + "/acp"
}

// TestHTTPProxyMessageTooBig: the proxy refuses a body over the limit
// with 413 before the upstream sees it (from Content-Length) or as soon
// as a chunked one crosses it, and a WebSocket message over it, in
// either direction, closes both legs with 1009; all of it recorded.
func TestHTTPProxyMessageTooBig(t *testing.T) {
	up := &limitUpstream{bigReply: limit1K + 1}
	_, rec, url := startLimitProxy(t, up, HTTPProxyOptions{MaxMessageSize: limit1K})
	c := http.DefaultClient
	if code, text := netkit.PostBody(t, c, url, netkit.Notification(limit1K), true); code != http.StatusAccepted || up.posts.Load() != 1 {
		t.Fatalf("a body at the limit: %d %q, upstream got %d", code, text, up.posts.Load())
	}
	code, text := netkit.PostBody(t, c, url, netkit.Notification(limit1K+1), true)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(text, "(1025 bytes) is over the 1KiB limit; raise it with --max-message-size") {
		t.Fatalf("over the limit with Content-Length: %d %q", code, text)
	}
	if up.postBytes.Load() != limit1K {
		t.Fatalf("the upstream received %d bytes, want only the first POST's %d", up.postBytes.Load(), limit1K)
	}
	code, text = netkit.PostBody(t, c, url, netkit.Notification(1<<20), false)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(text, "over the 1KiB limit; raise it with --max-message-size") {
		t.Fatalf("over the limit, chunked: %d %q", code, text)
	}
	if up.posts.Load() != 1 {
		t.Fatalf("the upstream took %d POSTs, want 1", up.posts.Load())
	}
	netkit.ContainsAll(t, rec, "agent POST http 413 acpscope: the message (1025 bytes)", "agent POST http 413 acpscope: the message is over")

	reason := "message over the 1KiB limit; raise acpscope's --max-message-size"
	for _, tt := range []struct{ name, send string }{{"from the client", netkit.Notification(limit1K + 1)}, {"from the agent", "big"}} {
		t.Run("WebSocket "+tt.name, func(t *testing.T) {
			ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			ws.WriteMessage(websocket.TextMessage, []byte(tt.send))
			if ce := netkit.WSClose(t, ws); ce.Code != websocket.CloseMessageTooBig || ce.Text != reason {
				t.Fatalf("close %d %q, want 1009 %q", ce.Code, ce.Text, reason)
			}
		})
	}
	// The close to the far leg is recorded after the near one's was sent.
	netkit.WaitLong(t, "1009 closes recorded on both legs of both sockets", func() bool {
		closes := map[string]int{}
		for _, fr := range rec.All() {
			if fr.Env.Headers["ws-close"] == "1009 "+reason {
				closes[fr.Dir.String()]++
			}
		}
		return closes["client"] == 2 && closes["agent"] == 2
	})
}

// TestHTTPProxyInFlightCap: beyond --max-in-flight a request gets 503
// with Retry-After naming the flag, recorded; the slot frees when a
// stream ends.
func TestHTTPProxyInFlightCap(t *testing.T) {
	p, rec, url := startLimitProxy(t, &limitUpstream{}, HTTPProxyOptions{MaxInFlight: 1})
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, stream)
	}
	resp := netkit.Post(t, http.DefaultClient, url, netkit.Notification(100), nil)
	text := netkit.ReadAll(t, resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(text, "--max-in-flight") {
		t.Fatalf("POST beyond the cap: %d Retry-After %q %q", resp.StatusCode, resp.Header.Get("Retry-After"), text)
	}
	netkit.ContainsAll(t, rec, "agent POST http 503 acpscope: requests in flight at the --max-in-flight cap (1); retry later or raise --max-in-flight")
	stream.Body.Close()
	netkit.WaitLong(t, "the stream's slot freed", func() bool { return p.InFlight() == 0 })
	if code, text := netkit.PostBody(t, http.DefaultClient, url, netkit.Notification(100), true); code != http.StatusAccepted {
		t.Fatalf("POST after the stream ended: %d %q", code, text)
	}
}

// TestReadUpTo: a body of unknown length is read whole up to the limit
// and refused past it, and comes back with no spare room (the capture
// keeps it as it is).

// hugeEventUpstream answers a GET with an event of size bytes of data,
// written in pieces with no line end until the last, then a small event
// with id 2, and ends the stream. sent is the whole body it wrote.
func hugeEventUpstream(size int) (h http.Handler, sent []byte) {
	sent = []byte("id: 1\ndata: " + netkit.Notification(size)[:size] + "\n\n")
	sent = append(sent, wire.AppendSSEEvent(nil, "2", []byte(`{"jsonrpc":"2.0","method":"small"}`))...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for b := sent; len(b) > 0; {
			n := min(len(b), 64<<10)
			if _, err := w.Write(b[:n]); err != nil {
				return
			}
			rc.Flush()
			b = b[n:]
		}
	}), sent
}

// TestHTTPProxyEventTooBig: an upstream's SSE event over
// --max-message-size reaches the client byte for byte and is recorded
// empty, flagged truncated, the stream going on after it; under
// interception, which delivers only what it holds whole, the client gets
// a comment naming the flag and the event's id instead, and the capture
// a drop by the proxy.
func TestHTTPProxyEventTooBig(t *testing.T) {
	const size = 8 << 20 // eight times the limit
	up, sent := hugeEventUpstream(size)
	for _, tt := range []struct {
		name      string
		intercept bool
	}{{"recorded", false}, {"intercepted", true}} {
		t.Run(tt.name, func(t *testing.T) {
			opts := HTTPProxyOptions{MaxMessageSize: 1 << 20}
			if tt.intercept {
				interceptAll(&opts)
			}
			_, rec, url := startLimitProxy(t, up, opts)
			resp, err := http.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			got := netkit.ReadAll(t, resp.Body)
			small := `{"jsonrpc":"2.0","method":"small"}`
			if !tt.intercept {
				if got != string(sent) {
					t.Fatalf("the client read %d bytes, not the %d the upstream sent", len(got), len(sent))
				}
				netkit.WaitLong(t, "the small event recorded", func() bool { return len(rec.All()) == 3 })
				f := rec.All()
				if f[1].Body != "" || f[1].Flags&wire.FlagTruncated == 0 || f[1].Env.EventID != "1" || f[2].Body != small {
					t.Fatalf("recorded %q", rec.Lines())
				}
				return
			}
			want := ": acpscope: " + acphttp.HeldTooBigText(1<<20) + "\n\nid: 1\n\n"
			if !strings.HasPrefix(got, want) || !strings.Contains(got, small) || len(got) > 4096 {
				t.Fatalf("the client read %q, want it to start %q", got[:min(len(got), 300)], want)
			}
			netkit.WaitLong(t, "the drop and the small event recorded", func() bool { return len(rec.All()) == 3 })
			f := rec.All()
			if fl := f[1].Fault; fl == nil || fl.By != protocol.ByProxy || fl.Stage != protocol.StageDropped || f[1].Env.EventID != "1" || f[2].Body != small {
				t.Fatalf("recorded %q, fault %+v", rec.Lines(), fl)
			}
		})
	}
}
