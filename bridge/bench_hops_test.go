package bridge

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/gorilla/websocket"
)

// BenchmarkHopsAgainstMinimal times each of connect and serve against the
// least a bridge of its kind does, over WebSocket and Streamable HTTP:
//
//   - minimal: a stdio↔network client forwarder to a network↔stdio
//     server forwarder, nothing recorded;
//   - connect: acpscope connect (recording) to that minimal server;
//   - serve: the minimal client to acpscope serve (recording);
//   - both: connect to serve.
//
// Each route answers the same request from the test agent, turn by turn
// in the same run, and the ratios against minimal are each hop's cost.
//
//	go test -run '^$' -bench HopsAgainstMinimal -benchtime 2000x -count 3 ./bridge
func BenchmarkHopsAgainstMinimal(b *testing.B) {
	type kind struct {
		name    string
		server  func(*testing.B) http.Handler
		client  func(*testing.B, string) *roundTripper
		fromURL func(string) string
	}
	kinds := []kind{
		{"ws", minimalWSServe, minimalWSConnect, wsURL},
		{"http", minimalHTTPServe, minimalHTTPConnect, func(u string) string { return u }},
	}
	for _, k := range kinds {
		for _, size := range []int{200, 16 << 10} {
			line := []byte(`{"jsonrpc":"2.0","id":7,"method":"_bench/ping","params":{"pad":"` + strings.Repeat("x", size) + `"}}` + "\n")
			b.Run(fmt.Sprintf("%s/request=%dB", k.name, size), func(b *testing.B) {
				minimal := k.fromURL(netkit.StartServer(b, netkit.H1, k.server(b)).URL + "/acp")
				serve := k.fromURL(startServe(b, netkit.H1, func(o *ServeOptions) {
					o.Recorder = captureFor(b)
					o.KeepAlive = DefaultKeepAlive // as users run it: pings, write deadlines
				}).url)
				routes := []*roundTripper{
					k.client(b, minimal),
					connectURL(b, minimal),
					k.client(b, serve),
					startBridged(b, k.name),
				}
				for _, r := range routes[:3] {
					r.roundTrip(b, initializeLine)
				}
				timeRoutes(b, routes, line)
			})
		}
	}
}

// timeRoutes times one round trip per route per iteration, in turn, and
// reports each against the first.
func timeRoutes(b *testing.B, routes []*roundTripper, line []byte) {
	var d [4]time.Duration
	b.ResetTimer()
	for range b.N {
		for i, r := range routes {
			t0 := time.Now()
			r.roundTrip(b, line)
			d[i] += time.Since(t0)
		}
	}
	b.ReportMetric(float64(d[0])/float64(b.N)/1e3, "minimal-µs/op")
	b.ReportMetric(float64(d[1])/float64(d[0]), "connect/minimal")
	b.ReportMetric(float64(d[2])/float64(d[0]), "serve/minimal")
	b.ReportMetric(float64(d[3])/float64(d[0]), "both/minimal")
}

// minimalWSServe is the least a WebSocket↔stdio server does: one test
// agent per socket, each text message written to its stdin as a line,
// each line of its stdout sent as a text message.
func minimalWSServe(b *testing.B) http.Handler {
	var up websocket.Upgrader
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		cmd := exec.Command(testAgent, "acp")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Error(err)
			return
		}
		defer cmd.Wait()
		defer in.Close()
		go func() {
			lines := bufio.NewReaderSize(out, 64<<10)
			for {
				l, err := lines.ReadBytes('\n')
				if err != nil || ws.WriteMessage(websocket.TextMessage, l[:len(l)-1]) != nil {
					return
				}
			}
		}()
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if _, err := in.Write(append(msg, '\n')); err != nil {
				return
			}
		}
	})
}

// wsURL turns an http:// endpoint into its ws:// twin.
func wsURL(httpURL string) string { return "ws" + strings.TrimPrefix(httpURL, "http") }

// minimalWSConnect is the least a stdio↔WebSocket client does: each line
// written to it goes out as a text message, each message comes back as a
// line.
func minimalWSConnect(b *testing.B, url string) *roundTripper {
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	stdinR, stdinW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		lines := bufio.NewReaderSize(stdinR, 64<<10)
		for {
			l, err := lines.ReadBytes('\n')
			if err != nil || ws.WriteMessage(websocket.TextMessage, l[:len(l)-1]) != nil {
				return
			}
		}
	}()
	go func() {
		defer outW.Close()
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if _, err := outW.Write(append(msg, '\n')); err != nil {
				return
			}
		}
	}()
	b.Cleanup(func() { stdinW.Close() })
	return &roundTripper{in: stdinW, out: bufio.NewReaderSize(outR, 64<<10)}
}
