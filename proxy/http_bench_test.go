package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// countingRecorder stands in for capture.Writer in benchmarks: it touches
// every byte handed over, as the writer's copy would, and keeps nothing.
type countingRecorder struct {
	tap.Discard
	frames, bytes atomic.Int64
}

func (c *countingRecorder) Frame(_ uint32, _ wire.Dir, _ int64, b []byte, _ wire.Flags, _ *wire.Envelope) {
	c.frames.Add(1)
	c.bytes.Add(int64(len(b)))
}

func (c *countingRecorder) TakeFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	c.Frame(conn, dir, t, b, flags, env)
}

// sseBurst serves one GET stream of n events of size bytes, then ends it.
func sseBurst(n, size int) http.Handler {
	ev := wire.AppendSSEEvent(nil, "", []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"`+strings.Repeat("x", size)+`"}}`))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for range n {
			w.Write(ev)
			rc.Flush()
		}
	})
}

func getStream(b *testing.B, c *http.Client, url string) int64 {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkSSEPath streams events straight from an upstream and through
// the recording proxy, in the same run, and reports the time ratio
// (proxied/direct) and the proxied throughput.
func BenchmarkSSEPath(b *testing.B) {
	for _, size := range []int{200, 16 << 10} {
		b.Run(fmt.Sprintf("event=%dB", size), func(b *testing.B) {
			up := netkit.StartServer(b, netkit.H1, sseBurst(500, size))
			rec := &countingRecorder{}
			p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: up.URL + "/acp", Recorder: rec})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			front := netkit.StartServer(b, netkit.H1, p)
			c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			var direct, proxied time.Duration
			var bytes int64
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				getStream(b, c, up.URL+"/acp")
				t1 := time.Now()
				bytes += getStream(b, c, front.URL+"/acp")
				proxied += time.Since(t1)
				direct += t1.Sub(t0)
			}
			b.ReportMetric(float64(proxied)/float64(direct), "proxied/direct")
			b.ReportMetric(float64(bytes)/proxied.Seconds()/(1<<20), "proxied-MiB/s")
			if rec.frames.Load() < int64(500*b.N) {
				b.Fatalf("recorded %d events, want %d", rec.frames.Load(), 500*b.N)
			}
		})
	}
}

// wsEcho echoes every message.
func wsEcho() http.Handler {
	up := websocket.Upgrader{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if c.WriteMessage(mt, msg) != nil {
				return
			}
		}
	})
}

// BenchmarkWSPath measures request/echo round trips straight to an
// upstream and through the recording proxy, in the same run, and reports
// the time ratio (proxied/direct).
func BenchmarkWSPath(b *testing.B) {
	up := netkit.StartServer(b, netkit.H1, wsEcho())
	rec := &countingRecorder{}
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: up.URL + "/acp", Recorder: rec})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	front := netkit.StartServer(b, netkit.H1, p)
	dial := func(base string) *websocket.Conn {
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/acp", nil)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	direct, proxied := dial(up.URL), dial(front.URL)
	defer direct.Close()
	defer proxied.Close()
	msg := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + strings.Repeat("x", 200) + `"}}`)
	roundTrip := func(c *websocket.Conn) {
		if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	}
	var dDirect, dProxied time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		roundTrip(direct)
		t1 := time.Now()
		roundTrip(proxied)
		dProxied += time.Since(t1)
		dDirect += t1.Sub(t0)
	}
	b.ReportMetric(float64(dProxied)/float64(dDirect), "proxied/direct")
	b.ReportMetric(float64(dProxied.Microseconds())/float64(b.N), "proxied-µs/roundtrip")
}
