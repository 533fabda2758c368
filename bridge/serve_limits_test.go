package bridge

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	acp "github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// initOnly is a tiny real agent: it answers initialize (id 0) and then
// reads its stdin until EOF, sending nothing. 500 of them cost a few
// hundred megabytes where 500 Go test agents would cost gigabytes.
const initOnly = `read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'; exec cat >/dev/null`

func shAgent(script string) []string { return []string{"/bin/sh", "-c", script} }

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`

// resources are what a server holds on our behalf: child processes,
// open files and goroutines of this process, and its OS threads.
type resources struct{ children, fds, goroutines, threads int }

func measure(t *testing.T) resources {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return resources{children: children(t), fds: len(fds), goroutines: runtime.NumGoroutine(), threads: threads(t)}
}

// children counts the processes whose parent is this one, zombies
// included (a zombie is a child nobody reaped).
func children(t *testing.T) int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	n, self := 0, os.Getpid()
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces, so cut at ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(self) {
			n++
		}
	}
	return n
}

func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// postInit sends initialize and returns the status, body and headers.
func postInit(t *testing.T, c *http.Client, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Post(url, netkit.CTJSON, strings.NewReader(initBody))
	if err != nil {
		t.Errorf("initialize: %v", err)
		return 0, "", nil
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String(), resp.Header
}

// TestServeReapsAbandonedConnections opens 500 connections that POST
// initialize and then do nothing, in waves of 100 (the cap in this test),
// and checks that the reaper stops each agent within the idle period,
// says so once per connection, and that afterwards the agents' processes,
// our file descriptors and goroutines are back to where they started.
// Waiting agents must not hold an OS thread each either.
func TestServeReapsAbandonedConnections(t *testing.T) {
	const waves, perWave = 5, 100
	// No collections during the test: an *os.File's finalizer would close
	// a leaked pipe and hide the leak.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := measure(t)
	var stderr testkit.Buffer
	srv, err := NewServer(ServeOptions{Argv: shAgent(initOnly), Agent: agent.Options{Grace: time.Second},
		KeepAlive: -1, Stderr: &stderr, MaxConns: perWave, IdleTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	client := hs.Client()
	url := hs.URL + "/acp"
	peakThreads := 0
	for wave := 0; wave < waves; wave++ {
		var wg sync.WaitGroup
		for i := 0; i < perWave; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if code, body, _ := postInit(t, client, url); code != http.StatusOK {
					t.Errorf("wave %d: initialize: %d %q", wave, code, body)
				}
			}()
		}
		wg.Wait()
		peakThreads = max(peakThreads, threads(t))
		netkit.WaitLong(t, fmt.Sprintf("wave %d reaped", wave), func() bool { return srv.Agents() == 0 })
	}
	if n := strings.Count(stderr.String(), "idle for 300ms"); n != waves*perWave {
		t.Errorf("%d idle notices on stderr, want one per connection (%d):\n%.400s", n, waves*perWave, stderr.String())
	}
	if !strings.Contains(stderr.String(), "--idle-timeout") {
		t.Errorf("the idle notice does not name --idle-timeout:\n%.300s", stderr.String())
	}
	// 100 agents alive at once: their reapers park in the poller, so
	// threads stay near the baseline instead of growing by one per agent.
	if peakThreads > before.threads+perWave/2 {
		t.Errorf("%d threads with %d agents alive, %d before: each waiting agent holds a thread", peakThreads, perWave, before.threads)
	}
	srv.Close()
	hs.Close()
	client.CloseIdleConnections()
	deadline := time.Now().Add(90 * time.Second)
	for after := measure(t); after.children > before.children || after.fds > before.fds || after.goroutines > before.goroutines; after = measure(t) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("not back to the baseline within 90s: before %+v, after %+v\n%s", before, after, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("before %+v, peak threads %d with %d agents alive", before, peakThreads, perWave)
}

// TestServeIdleSparesLiveConnections: an open connection stream is not
// idleness, and neither is a POST still arriving; the connection left
// alone is reaped, and the others are once they go quiet.
func TestServeIdleSparesLiveConnections(t *testing.T) {
	// idle must outlast the gap between an initialize and the stream or
	// POST that follows it, even on a loaded machine.
	const idle = 3 * time.Second
	var stderr testkit.Buffer
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.IdleTimeout, o.DisconnectGrace, o.Stderr = idle, -1, &stderr })
	streaming, uploading, silent := f.initialize(t), f.initialize(t), f.initialize(t)
	_, stream := f.openStream(t, streaming, "")
	body, upload := io.Pipe()
	posted := make(chan int, 1)
	go func() { // uploader: ends when the POST is answered
		req, _ := http.NewRequest(http.MethodPost, f.url, body)
		req.Header.Set("Content-Type", netkit.CTJSON)
		req.Header.Set(acphttp.HeaderConnectionID, uploading)
		resp, err := f.c.Do(req)
		if err != nil {
			posted <- 0
			return
		}
		resp.Body.Close()
		posted <- resp.StatusCode
	}()
	msg := `{"jsonrpc":"2.0","method":"x/ping","params":{}}`
	upload.Write([]byte(msg[:10])) // the POST has begun and stays unfinished
	netkit.WaitLong(t, "the silent connection reaped", func() bool { return f.srv.lookup(silent) == nil })
	time.Sleep(2 * idle) // a lower bound: the longer, the stronger the check
	if f.srv.lookup(streaming) == nil || f.srv.lookup(uploading) == nil {
		t.Fatalf("a connection with a stream open or a POST arriving was reaped:\n%s", stderr.String())
	}
	upload.Write([]byte(msg[10:]))
	upload.Close()
	if code := <-posted; code != http.StatusAccepted {
		t.Fatalf("the long POST: %d", code)
	}
	stream.Body.Close()
	netkit.WaitLong(t, "the others reaped once quiet", func() bool { return f.srv.Conns() == 0 })
	for _, id := range []string{silent, uploading, streaming} {
		if n := strings.Count(stderr.String(), "connection "+id+" idle for"); n != 1 {
			t.Errorf("connection %s reaped with %d notices, want 1:\n%s", id, n, stderr.String())
		}
	}
}

// TestServeConnectionCap: past --max-connections, initialize and a
// WebSocket get 503 with Retry-After and a message naming the flag,
// recorded; a slot frees once an agent has gone.
func TestServeConnectionCap(t *testing.T) {
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.Argv, o.MaxConns = shAgent(initOnly), 2 })
	first := f.initialize(t)
	f.initialize(t)
	code, body, h := postInit(t, f.c, f.url)
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, "--max-connections") {
		t.Fatalf("third initialize: %d Retry-After %q %q; want 503, Retry-After and the flag", code, h.Get("Retry-After"), body)
	}
	_, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.url, "http"), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("WebSocket past the cap: %v %v; want 503 with Retry-After", err, resp)
	}
	if f.srv.Agents() != 2 {
		t.Fatalf("%d agents running, want the cap, 2", f.srv.Agents())
	}
	resp2 := f.do(t, "DELETE", "", acphttp.HeaderConnectionID, first)
	netkit.ReadAll(t, resp2.Body)
	netkit.WaitLong(t, "the deleted connection's agent gone", func() bool { return f.srv.Agents() == 1 })
	f.initialize(t)
	netkit.ContainsAll(t, f.rec, `0 agent POST http 503 acpscope serve: connections at the --max-connections cap (2); retry later`)
}

// TestServeNoWarningAfterDelete: a reply the agent writes after DELETE
// has nowhere to go and is dropped quietly: no stream filled up, so no
// warning may say one did.
func TestServeNoWarningAfterDelete(t *testing.T) {
	// Answers initialize, reads one request, and answers it only once its
	// stdin has closed, which is what DELETE does.
	late := `read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{}}'; read -r req; cat >/dev/null; printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"late":true}}'`
	var stderr testkit.Buffer
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.Argv, o.Stderr = shAgent(late), &stderr })
	conn := f.initialize2(t)
	resp := f.do(t, "POST", `{"jsonrpc":"2.0","id":1,"method":"x/slow","params":{}}`, "Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn)
	netkit.ReadAll(t, resp.Body)
	resp = f.do(t, "DELETE", "", acphttp.HeaderConnectionID, conn)
	netkit.ReadAll(t, resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	// The agent has exited and its stdout reader has routed the late
	// reply once the slot is free.
	netkit.WaitLong(t, "the agent gone and its output drained", func() bool { return f.srv.Agents() == 0 })
	if got := stderr.String(); strings.Contains(got, "no client had opened") {
		t.Errorf("a false warning for a reply after DELETE:\n%s", got)
	}
}

// initialize2 opens a connection with an agent whose initialize result
// is not the test agent's.
func (f *serveFixture) initialize2(t *testing.T) string {
	t.Helper()
	code, body, h := postInit(t, f.c, f.url)
	if code != http.StatusOK || h.Get(acphttp.HeaderConnectionID) == "" {
		t.Fatalf("initialize: %d %q", code, body)
	}
	return h.Get(acphttp.HeaderConnectionID)
}

// TestServeMessageTooBig: a POST body over --max-message-size gets 413,
// refused from its Content-Length or as soon as a chunked body crosses
// the limit; a WebSocket message over it gets close 1009; each says the
// limit and the flag and is recorded. A body of exactly the limit passes.
func TestServeMessageTooBig(t *testing.T) {
	const limit1K = 1024
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.MaxMessageSize = limit1K })
	conn := f.initialize(t)
	tests := []struct {
		name  string
		size  int
		sized bool
		want  int
		text  string
	}{
		{"at the limit", limit1K, true, http.StatusAccepted, ""},
		{"over, with Content-Length", limit1K + 1, true, http.StatusRequestEntityTooLarge, "the message (1025 bytes) is over the 1KiB limit; raise it with --max-message-size"},
		{"over, chunked", 64 << 10, false, http.StatusRequestEntityTooLarge, "the message is over the 1KiB limit; raise it with --max-message-size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, text := netkit.PostBody(t, f.c, f.url, netkit.Notification(tt.size), tt.sized, acphttp.HeaderConnectionID, conn)
			if code != tt.want || !strings.Contains(text, tt.text) {
				t.Fatalf("%d %q, want %d %q", code, text, tt.want, tt.text)
			}
			if tt.text != "" {
				netkit.ContainsAll(t, f.rec, "1 agent POST http 413 acpscope serve: "+tt.text)
			}
		})
	}
	t.Run("WebSocket", func(t *testing.T) {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.url, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		ws.WriteMessage(websocket.TextMessage, []byte(netkit.Notification(limit1K+1)))
		ce := netkit.WSClose(t, ws)
		reason := "message over the 1KiB limit; raise acpscope's --max-message-size"
		if ce.Code != websocket.CloseMessageTooBig || ce.Text != reason {
			t.Fatalf("close %d %q, want 1009 %q", ce.Code, ce.Text, reason)
		}
		netkit.WaitLong(t, "the WebSocket's agent gone", func() bool { return f.srv.Agents() == 1 })
		found := false
		for _, fr := range f.rec.All() {
			found = found || fr.Env.Headers["ws-close"] == "1009 "+reason
		}
		if !found {
			t.Errorf("the 1009 close was not recorded:\n%s", strings.Join(f.rec.Lines(), "\n"))
		}
	})
}

// TestServeNewConnectionHeldForItsOpener: a connection is not idle while
// the request that opened it is still being handled, however long that
// takes; it is reaped once its opener lets go and the period passes.
// (A busy machine once took longer than --idle-timeout between opening
// a connection and writing the initialize to its agent.)
func TestServeNewConnectionHeldForItsOpener(t *testing.T) {
	var stderr testkit.Buffer
	idle := 100 * time.Millisecond
	srv, err := NewServer(ServeOptions{Argv: shAgent(initOnly), Agent: agent.Options{Grace: time.Second},
		KeepAlive: -1, Stderr: &stderr, IdleTimeout: idle})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !srv.acquire() {
		t.Fatal("no slot for a connection")
	}
	c, err := srv.startConn(nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * idle) // the opener is slow: still handling its request
	if c.closing() || srv.Agents() != 1 {
		t.Fatalf("the connection was reaped while its opener held it:\n%s", stderr.String())
	}
	c.unhold()
	netkit.WaitLong(t, "the connection reaped once let go", func() bool { return srv.Agents() == 0 })
	if !strings.Contains(stderr.String(), "idle for 100ms") {
		t.Errorf("no idle notice after the opener let go:\n%s", stderr.String())
	}
}

// TestServeLetsSilentWebSocketsGo: serve pings its WebSocket clients. One
// that answers (its library does while it reads) stays however quiet. One
// that reads nothing is closed with 1001 once three intervals pass
// without a pong, the close recorded and its agent stopped. A message
// trickling in over longer than that is alive for its bytes and gets
// through whole.
func TestServeLetsSilentWebSocketsGo(t *testing.T) {
	const interval = time.Second // a loaded machine must not starve a live client's pongs for 3 s
	wait := acphttp.PeerMissedPings * interval
	reason := fmt.Sprintf("1001 no answer to pings for %v", wait)
	closed := func(f *serveFixture) bool {
		for _, fr := range f.rec.All() {
			if fr.Env.Headers["ws-close"] == reason {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name   string
		client func(t *testing.T, ws *websocket.Conn, f *serveFixture)
	}{
		{"answers pings", func(t *testing.T, ws *websocket.Conn, f *serveFixture) {
			go func() {
				for {
					if _, _, err := ws.ReadMessage(); err != nil {
						return
					}
				}
			}()
			time.Sleep(2*wait + interval)
			if err := ws.WriteMessage(websocket.TextMessage, []byte(netkit.Notification(100))); err != nil {
				t.Fatalf("a client that answers pings was let go: %v", err)
			}
			if f.srv.Agents() != 1 || closed(f) {
				t.Fatalf("a client that answers pings was let go (agents %d):\n%s", f.srv.Agents(), strings.Join(f.rec.Lines(), "\n"))
			}
		}},
		{"reads nothing", func(t *testing.T, ws *websocket.Conn, f *serveFixture) {
			netkit.WaitLong(t, "the silent client's agent stopped", func() bool { return f.srv.Agents() == 0 })
			if !closed(f) {
				t.Fatalf("no %q close recorded:\n%s", reason, strings.Join(f.rec.Lines(), "\n"))
			}
			ws.SetPingHandler(func(string) error { return nil }) // the pings it left unanswered are queued before the close
			if ce := netkit.WSClose(t, ws); ce.Code != websocket.CloseGoingAway {
				t.Fatalf("close %d %q, want 1001", ce.Code, ce.Text)
			}
		}},
		{"sends slowly", func(t *testing.T, ws *websocket.Conn, f *serveFixture) {
			const part = 1 << 10
			msg := netkit.Notification(8 * part)
			w, err := ws.NextWriter(websocket.TextMessage)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for off := 0; off < len(msg); off += part {
				if _, err := w.Write([]byte(msg[off:min(off+part, len(msg))])); err != nil {
					t.Fatalf("after %v: %v", time.Since(start), err)
				}
				time.Sleep(interval / 2)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("after %v: %v", time.Since(start), err)
			}
			netkit.WaitLong(t, "the slow message recorded", func() bool {
				for _, fr := range f.rec.All() {
					if fr.Dir == wire.DirClient && fr.Body == msg {
						return true
					}
				}
				return false
			})
			if time.Since(start) < wait {
				t.Fatalf("the message took %v, under the %v wait: the case proves nothing", time.Since(start), wait)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := startServe(t, netkit.H1, func(o *ServeOptions) { o.KeepAlive = interval })
			d := websocket.Dialer{WriteBufferSize: 1 << 10}
			ws, _, err := d.Dial("ws"+strings.TrimPrefix(f.url, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			netkit.WaitLong(t, "the agent started", func() bool { return f.srv.Agents() == 1 })
			tt.client(t, ws, f)
		})
	}
}

// TestServeLetsNonReadingClientsGo: a client that stops reading while
// the agent talks fills the socket's buffers, and serve's write would
// block for good, and the agent behind it once its stream is full. With
// keep-alives on, a write that makes no
// progress for three intervals fails: the SSE stream is free for the
// next GET, which gets what was queued; a WebSocket client that reads
// nothing, though it keeps sending pongs, is let go with its agent.
func TestServeLetsNonReadingClientsGo(t *testing.T) {
	const interval = time.Second
	note := `{"jsonrpc":"2.0","method":"x/n","params":{"pad":"` + strings.Repeat("a", 1000) + `"}}`
	flood := `i=0; while [ $i -lt 20000 ]; do printf '%s\n' '` + note + `'; i=$((i+1)); done; exec cat >/dev/null`
	t.Run("SSE", func(t *testing.T) {
		t.Parallel()
		f := startServe(t, netkit.H1, func(o *ServeOptions) {
			o.KeepAlive = interval
			o.Argv = shAgent(`read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'; read -r line; ` + flood)
		})
		conn := f.initialize(t)
		f.rawStream(t, conn, 4<<10)
		if code, text := netkit.PostBody(t, f.c, f.url, `{"jsonrpc":"2.0","method":"x/go"}`, true, acphttp.HeaderConnectionID, conn); code != http.StatusAccepted {
			t.Fatalf("POST: %d %q", code, text)
		}
		var second *http.Response
		netkit.WaitLong(t, "a second GET taking over from the client that reads nothing", func() bool {
			resp := f.do(t, "GET", "", "Accept", "text/event-stream", acphttp.HeaderConnectionID, conn)
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				return false
			}
			second = resp
			return true
		})
		defer second.Body.Close()
		sc := bufio.NewScanner(second.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if data != note {
					t.Fatalf("first event %.80q, want the agent's notification", data)
				}
				return
			}
		}
		t.Fatalf("the second GET ended without an event: %v", sc.Err())
	})
	t.Run("WebSocket", func(t *testing.T) {
		t.Parallel()
		f := startServe(t, netkit.H1, func(o *ServeOptions) {
			o.KeepAlive = interval
			o.Argv = shAgent(`read -r line; ` + flood)
		})
		d := websocket.Dialer{ReadBufferSize: 4 << 10}
		ws, _, err := d.Dial("ws"+strings.TrimPrefix(f.url, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		stop := make(chan struct{})
		defer close(stop)
		go func() { // alive to the read side's watch, never reading
			for {
				select {
				case <-stop:
					return
				case <-time.After(interval / 4):
					ws.WriteControl(websocket.PongMessage, nil, time.Now().Add(time.Second))
				}
			}
		}()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"x/go"}`)); err != nil {
			t.Fatal(err)
		}
		netkit.WaitLong(t, "the agent started", func() bool { return f.srv.Agents() == 1 })
		netkit.WaitLong(t, "the client that reads nothing let go, with its agent", func() bool { return f.srv.Agents() == 0 })
	})
}

// rawStream opens conn's stream over a TCP connection of its own whose
// receive buffer is readBuf bytes (fixed, so the kernel holds little of
// what the client does not read), and returns the response once its
// headers are here: the stream is attached then, with the connection
// for deadlines. The body is never to be closed, which would drain an
// endless stream; the test's end closes the connection.
func (f *serveFixture) rawStream(t *testing.T, conn string, readBuf int) (*http.Response, net.Conn) {
	t.Helper()
	u, _ := url.Parse(f.url)
	raw, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	raw.(*net.TCPConn).SetReadBuffer(readBuf)
	fmt.Fprintf(raw, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n%s: %s\r\n\r\n", u.Path, u.Host, acphttp.HeaderConnectionID, conn)
	resp, err := http.ReadResponse(bufio.NewReader(raw), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream %s: %v %v", conn, resp, err)
	}
	return resp, raw
}

// TestServeHoldsTheAgentBehindASlowReader checks that a client reading
// its stream slowly holds the agent back, as a slow editor holds back a
// stdio agent through the pipe, rather than serve queuing the agent's
// output without bound; and that every message still arrives, in order.
// The client reads nothing until the agent has stopped writing, then
// everything.
func TestServeHoldsTheAgentBehindASlowReader(t *testing.T) {
	t.Parallel()
	const n, limit = 2000, 1 << 20 // 2000 messages of 16 KiB: 32 MiB
	progress := filepath.Join(t.TempDir(), "progress")
	flood := `i=0; while [ $i -lt ` + strconv.Itoa(n) + ` ]; do ` +
		`printf '{"jsonrpc":"2.0","method":"x/n","params":{"i":%d,"pad":"%s"}}\n' $i "$pad"; ` +
		`i=$((i+1)); echo $i > '` + progress + `'; done; exec cat >/dev/null`
	f := startServe(t, netkit.H1, func(o *ServeOptions) {
		o.StreamBuffer = limit
		o.Argv = shAgent(`pad=$(printf '%16384s' '' | tr ' ' a); read -r line; ` +
			`printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'; read -r line; ` + flood)
	})
	conn := f.initialize(t)
	resp, raw := f.rawStream(t, conn, 64<<10)
	if code, text := netkit.PostBody(t, f.c, f.url, `{"jsonrpc":"2.0","method":"x/go"}`, true, acphttp.HeaderConnectionID, conn); code != http.StatusAccepted {
		t.Fatalf("POST: %d %q", code, text)
	}

	written := func() int {
		b, _ := os.ReadFile(progress)
		v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return v
	}
	last, still := -1, 0
	netkit.WaitLong(t, "the agent stopped writing", func() bool {
		time.Sleep(100 * time.Millisecond)
		if w := written(); w != last || w == 0 {
			last, still = w, 0
			return false
		}
		still++
		return still >= 20 || last == n // two seconds unchanged, or done
	})
	// Held: 1 MiB queued, the socket's buffers (a few MiB) and the pipe.
	t.Logf("the agent wrote %d of %d messages before the client read", last, n)
	if last > n/2 {
		t.Fatalf("the agent wrote %d of %d messages of 16 KiB while the client read nothing: serve queued them", last, n)
	}

	// A stream that stalls fails the read, and says how far it came,
	// rather than hanging until the suite's timeout.
	raw.SetReadDeadline(time.Now().Add(2 * netkit.CondWait))
	var d wire.SSEDecoder
	got, buf := 0, make([]byte, 64<<10)
	for got < n {
		k, err := resp.Body.Read(buf)
		d.Push(buf[:k], func(e *wire.SSEEvent) {
			if e.Comment {
				return
			}
			want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"x/n","params":{"i":%d,"pad":"`, got)
			if !strings.HasPrefix(string(e.Data), want) || len(e.Data) < 16<<10 {
				t.Fatalf("event %d: %.80q (%d bytes), want message %d", got, e.Data, len(e.Data), got)
			}
			got++
		})
		if err != nil {
			t.Fatalf("the stream ended after %d of %d messages: %v", got, n, err)
		}
	}
}

// TestServeRecordsWhatNoStreamCouldHold: messages for streams no client
// has opened, past the connection's bound, are dropped; each is recorded
// as dropped by serve, so the capture shows the loss, and stderr says
// so. The bound is the connection's: notes spread over eight sessions'
// streams are held no more than notes for one stream. GETs then get what
// was held, in order.
func TestServeRecordsWhatNoStreamCouldHold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		session func(i int) string // the stream of note i: "" is the connection's
	}{
		{"one stream", func(int) string { return "" }},
		{"a session each", func(i int) string { return fmt.Sprintf("s%d", i) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			note := func(i int) string {
				sid := ""
				if s := tt.session(i); s != "" {
					sid = `"sessionId":"` + s + `",`
				}
				return fmt.Sprintf(`{"jsonrpc":"2.0","method":"x/n","params":{%s"i":%d,"pad":"%s"}}`, sid, i, strings.Repeat("a", 1000))
			}
			checkHeldAndDropped(t, note, tt.session)
		})
	}
}

// checkHeldAndDropped runs an agent that writes notes 0-7 to streams
// nobody has opened, bounded at three notes for the connection, and
// checks that notes 3-7 are dropped, recorded and said, and 0-2 held.
func checkHeldAndDropped(t *testing.T, note func(i int) string, session func(i int) string) {
	var notes strings.Builder
	for i := range 8 {
		notes.WriteString(note(i) + "\n")
	}
	var stderr testkit.Buffer
	f := startServe(t, netkit.H1, func(o *ServeOptions) {
		o.StreamBuffer = 3 * len(note(0)) // three notes fit
		o.Stderr = &stderr
		o.Argv = shAgent(`read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'; read -r line; printf '%s' '` +
			notes.String() + `'; exec cat >/dev/null`)
	})
	conn := f.initialize2(t)
	if code, text := netkit.PostBody(t, f.c, f.url, `{"jsonrpc":"2.0","method":"x/go"}`, true, acphttp.HeaderConnectionID, conn); code != http.StatusAccepted {
		t.Fatalf("POST: %d %q", code, text)
	}
	var dropped []netkit.Frame
	netkit.WaitLong(t, "five notes dropped and recorded", func() bool {
		dropped = dropped[:0]
		for _, fr := range f.rec.All() {
			if fr.Fault != nil {
				dropped = append(dropped, fr)
			}
		}
		return len(dropped) >= 5
	})
	for i, fr := range dropped {
		fl, sid := fr.Fault, session(3+i)
		stream := wire.StreamConnection
		if sid != "" {
			stream = wire.StreamSession
		}
		if fr.Body != note(3+i) || fr.Dir != wire.DirAgent || fl.Stage != acp.StageDropped || fl.By != acp.ByServe ||
			fr.Env.Stream != stream || fr.Env.SessionID != sid || fr.Env.ConnectionID != conn || !strings.Contains(fl.Note, "no client had opened") {
			t.Errorf("dropped record %d: %.60q %v %+v %+v, want note %d dropped by serve on stream %v %q", i, fr.Body, fr.Dir, fl, fr.Env, 3+i, stream, sid)
		}
	}
	if len(dropped) != 5 {
		t.Errorf("%d records dropped, want 5", len(dropped))
	}
	said := fmt.Sprintf("dropped a %s agent message (recorded): no client had opened ", human.Size(int64(len(note(0)))))
	bound := fmt.Sprintf("the connection's streams held %s of their %s", human.Size(int64(3*len(note(0)))), human.Size(int64(3*len(note(0)))))
	if got := stderr.String(); strings.Count(got, said) != 5 || strings.Count(got, bound) != 5 {
		t.Errorf("stderr, want %q and %q five times:\n%s", said, bound, got)
	}
	streams := map[string]<-chan sseEvent{}
	for i := range 3 { // in order on each stream, whichever stream holds it
		events, ok := streams[session(i)]
		if !ok {
			events = f.openEvents(t, conn, session(i))
			streams[session(i)] = events
		}
		if e := nextEvent(t, events); e.data != note(i) {
			t.Fatalf("event for note %d: %.60q", i, e.data)
		}
	}
}
