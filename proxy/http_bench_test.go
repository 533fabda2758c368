package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
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

// wsEcho echoes every message, on sockets up makes.
func wsEcho(up websocket.Upgrader) http.Handler {
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
	up := netkit.StartServer(b, netkit.H1, wsEcho(websocket.Upgrader{}))
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

// minimalProxy is the baseline the HTTP targets are judged against: the
// least a Go reverse proxy does, httputil.ReverseProxy flushing every
// write (FlushInterval -1), which also passes WebSocket upgrades.
func minimalProxy(b *testing.B, upstream string) string {
	u, err := url.Parse(upstream)
	if err != nil {
		b.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	return netkit.StartServer(b, netkit.H1, rp).URL
}

// captureRecorder is a real capture writer (fsync on) in b's temporary
// directory, closed when b ends.
func captureRecorder(b *testing.B) *capture.Writer {
	w, err := capture.Create(filepath.Join(b.TempDir(), "bench.acpscope"), capture.WriterOptions{NoFeed: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	return w
}

// recordingProxy is acpscope's proxy to upstream recording into a real
// capture; once b's turns are timed, and the proxy and the capture are
// closed, it reports the share of messages capture could not keep (a
// ratio bought by shedding them would flatter).
func recordingProxy(b *testing.B, upstream string) string {
	w := captureRecorder(b)
	b.Cleanup(func() { // after the proxy's own cleanup, registered below
		w.Close()
		st := w.Stats()
		b.ReportMetric(lostShare(st.Loss.Messages, int64(st.Committed)), "%lost")
	})
	return proxyRecordingInto(b, upstream, w)
}

// floorProxy is acpscope's proxy recording into a floorRecorder: the
// proxy's own cost and that of writing the traffic down.
// It reports the share of messages the floor could not keep, as
// recordingProxy does for capture.
func floorProxy(b *testing.B, upstream string) string {
	return floorStageProxy(floorSync)(b, upstream)
}

// floorStageProxy is floorProxy with a recorder that takes messages only
// as far as stage.
func floorStageProxy(stage floorStage) func(b *testing.B, upstream string) string {
	return func(b *testing.B, upstream string) string {
		// A capture writer raises GOMAXPROCS once per process, for its
		// own goroutines; one made here, though unused, has the floor's
		// turns run with the processors capture's turns run with,
		// whichever benchmark runs first.
		captureRecorder(b)
		r := newFloorRecorder(b, stage)
		b.Cleanup(func() { // after the proxy's own cleanup, registered below
			r.stop()
			b.ReportMetric(lostShare(r.dropped.Load(), r.written.Load()), "%lost")
		})
		return proxyRecordingInto(b, upstream, r)
	}
}

// lostShare is lost messages as a percentage of all handed over.
func lostShare(lost, kept int64) float64 { return 100 * float64(lost) / float64(max(1, lost+kept)) }

// noCaptureProxy is acpscope's proxy as --no-capture runs it: it still
// reads every message (SSE events, WebSocket frames) but records none.
func noCaptureProxy(b *testing.B, upstream string) string {
	return proxyRecordingInto(b, upstream, nil)
}

// proxyRecordingInto starts acpscope's proxy to upstream with rec, nil
// for none.
func proxyRecordingInto(b *testing.B, upstream string, rec tap.Recorder) string {
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upstream + "/acp", Recorder: rec})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	return netkit.StartServer(b, netkit.H1, p).URL
}

// setup is one of the proxies a benchmark turn runs through, started in
// front of an upstream; its name is how its ratios are reported.
type setup struct {
	name  string
	start func(b *testing.B, upstream string) string
}

// startSetups starts each of the setups after the direct connection and
// the minimal proxy, and returns the base URLs of all of them in turn
// order.
func startSetups(b *testing.B, upstream string, setups []setup) []string {
	bases := []string{upstream, minimalProxy(b, upstream)}
	for _, s := range setups {
		bases = append(bases, s.start(b, upstream))
	}
	return bases
}

// timeTurns runs one turn of f against each of bases (from startSetups)
// per iteration, in turn, and reports each setup's time over the minimal
// proxy's, and the last setup's and the minimal proxy's over the direct
// connection's. The recording setup comes last: what it has left to
// write after a turn of megabytes (an SSE stream) falls in the direct
// connection's turn, which no ratio over the minimal proxy counts.
func timeTurns(b *testing.B, bases []string, setups []setup, f func(base string)) {
	d := make([]time.Duration, len(bases))
	b.ResetTimer()
	for range b.N {
		for i, base := range bases {
			t0 := time.Now()
			f(base)
			d[i] += time.Since(t0)
		}
	}
	direct, minimal := d[0], d[1]
	for i, s := range setups {
		b.ReportMetric(float64(d[i+2])/float64(minimal), s.name+"/minimal")
	}
	last := setups[len(setups)-1].name
	b.ReportMetric(float64(d[len(d)-1])/float64(direct), last+"/direct")
	b.ReportMetric(float64(minimal)/float64(direct), "minimal/direct")
}

// BenchmarkHTTPAgainstMinimal times acpscope's proxy with a real capture
// ("ours") against a minimal reverse proxy and a direct connection, turn
// by turn in the same run: a GET stream of 500 SSE events of 200 B and
// of 16 KiB, a POST answered with JSON, and WebSocket round trips of
// 200 B, 16 KiB and 1 MiB. "nocapture" is acpscope's proxy as
// --no-capture runs it, to tell the proxy's own cost from capture's. A
// recording's work goes on after its turn (capture polls its queue for
// 100 ms and commits within 50 ms), so in cases of short turns (a POST,
// a WebSocket round trip) part of it lands in the other setups' turns,
// the minimal proxy's included; BenchmarkHTTPFloor has the same turns,
// so its ratios compare with these.
//
//	go test -run '^$' -bench HTTPAgainstMinimal -count 5 ./proxy
func BenchmarkHTTPAgainstMinimal(b *testing.B) {
	httpCases(b, []setup{{"nocapture", noCaptureProxy}, {"ours", recordingProxy}})
}

// BenchmarkHTTPFloor times, in the cases of BenchmarkHTTPAgainstMinimal,
// acpscope's proxy writing the bytes of every message to a plain file
// and syncing it as capture commits (floorRecorder): what writing the
// traffic down costs on this machine, with none of capture's framing,
// validation or database. It runs apart from "ours" so that neither's
// writing, which goes on after its turn, lands in the other's turn.
//
//	go test -run '^$' -bench 'HTTPAgainstMinimal|HTTPFloor' -count 5 ./proxy
func BenchmarkHTTPFloor(b *testing.B) {
	httpCases(b, []setup{{"floor", floorProxy}})
}

// BenchmarkHTTPFloorStages times the floor of 16 KiB SSE events stage by
// stage, each in a run of its own against the minimal proxy: messages
// let go as soon as they are handed over ("lend"), queued to the
// writer, which lets them go unread ("handoff"), copied into its batch
// ("copy"), written ("write"), and written and synced ("sync", the
// floor itself). Where a stage's ratio rises over the one before is what
// that step costs the proxy.
//
//	go test -run '^$' -bench HTTPFloorStages -count 3 ./proxy
func BenchmarkHTTPFloorStages(b *testing.B) {
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	up := netkit.StartServer(b, netkit.H1, sseBurst(500, 16<<10)).URL
	for _, st := range floorStages {
		b.Run("sse=16384B/stage="+st.name, func(b *testing.B) {
			setups := []setup{{"floor", floorStageProxy(st.stage)}}
			timeTurns(b, startSetups(b, up, setups), setups, func(base string) { getStream(b, c, base+"/acp") })
		})
	}
}

// httpCases runs the HTTP benchmarks' cases through the minimal proxy
// and setups.
func httpCases(b *testing.B, setups []setup) {
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	for _, size := range []int{200, 16 << 10} {
		b.Run(fmt.Sprintf("sse=%dB", size), func(b *testing.B) {
			up := netkit.StartServer(b, netkit.H1, sseBurst(500, size)).URL
			timeTurns(b, startSetups(b, up, setups), setups, func(base string) { getStream(b, c, base+"/acp") })
		})
	}
	b.Run("post", func(b *testing.B) {
		up := netkit.StartServer(b, netkit.H1, jsonReply()).URL
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"pad":"` + strings.Repeat("x", 120) + `"}}`)
		timeTurns(b, startSetups(b, up, setups), setups, func(base string) { post(b, c, base+"/acp", body) })
	})
	for _, size := range []int{200, 16 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("ws=%dB", size), func(b *testing.B) { wsTurns(b, size, setups) })
	}
}

// wsTurns times a WebSocket round trip of a message of size bytes of
// padding, turn by turn, as BenchmarkHTTPAgainstMinimal does.
func wsTurns(b *testing.B, size int, setups []setup) {
	up := netkit.StartServer(b, netkit.H1, wsEcho(websocket.Upgrader{})).URL
	conns := map[string]*websocket.Conn{}
	msg := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + strings.Repeat("x", size) + `"}}`)
	bases := startSetups(b, up, setups)
	for _, base := range bases {
		conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/acp", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		conns[base] = conn
	}
	timeTurns(b, bases, setups, func(base string) {
		conn := conns[base]
		if err := conn.WriteMessage(websocket.TextMessage, msg); err != nil {
			b.Fatal(err)
		}
		if _, _, err := conn.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	})
}

// jsonReply answers every POST with a JSON-RPC result.
func jsonReply() http.Handler {
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	})
}

func post(b *testing.B, c *http.Client, url string, body []byte) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("POST %s: %v, status %d", url, err, resp.StatusCode)
	}
}
