package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// rawListener serves each connection with serve, on a loopback port.
func rawListener(t *testing.T, serve func(net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() { // accept loop, ends when the listener closes
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); serve(c) }()
		}
	}()
	return "http://" + l.Addr().String() + "/acp"
}

func wsDialRequest(front string) string {
	host := strings.TrimPrefix(front, "http://")
	return "GET /acp HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
}

// TestWebSocketBytesUpstreamAbuse: an upstream that answers an upgrade
// with endless headers gets the client a 502 saying so; one whose
// refusal's body never ends gets the client the refusal, with what came
// of it, once the handshake timeout has passed; one that never answers
// holds nothing once the client has gone.
func TestWebSocketBytesUpstreamAbuse(t *testing.T) {
	flood := rawListener(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\n")
		line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
		for {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	})
	silent := rawListener(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	endless := rawListener(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 1000\r\n\r\nno entry: ")
		io.Copy(io.Discard, c) // the rest of the body never comes
	})

	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: flood})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	front := netkit.StartServer(t, netkit.H1, p)
	_, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(front.URL, "http")+"/acp", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("endless headers: %v %v, want 502", resp, err)
	}
	if body := netkit.ReadAll(t, resp.Body); !strings.Contains(body, "answer to the upgrade is over 1048576 bytes") {
		t.Fatalf("the 502 says %q", body)
	}

	r, err := NewHTTPProxy(HTTPProxyOptions{Upstream: endless})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	front = netkit.StartServer(t, netkit.H1, r)
	_, resp, err = websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(front.URL, "http")+"/acp", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a refusal whose body never ends: %v %v, want 403", resp, err)
	}
	if body := netkit.ReadAll(t, resp.Body); body != "no entry: " {
		t.Fatalf("the 403 says %q, want what came of the upstream's body", body)
	}

	q, err := NewHTTPProxy(HTTPProxyOptions{Upstream: silent})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	front = netkit.StartServer(t, netkit.H1, q)
	c, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, wsDialRequest(front.URL))
	netkit.WaitLong(t, "the upgrade in flight", func() bool { return q.InFlight() == 1 })
	c.Close()
	netkit.WaitLong(t, "the handler gone with its client", func() bool { return q.InFlight() == 0 })
}

// TestWebSocketBytesReclaimed: sockets abandoned mid-stream, without a
// close frame, leave no goroutine and no request in flight behind.
func TestWebSocketBytesReclaimed(t *testing.T) {
	up := &limitUpstream{}
	p, rec, url := startLimitProxy(t, up, HTTPProxyOptions{})
	wsURL := "ws" + strings.TrimPrefix(url, "http")
	warm, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	warm.Close()
	netkit.WaitLong(t, "the first socket gone", func() bool { return p.InFlight() == 0 })
	before := runtime.NumGoroutine()
	for i := range 20 {
		ws, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i)
		ws.WriteMessage(websocket.TextMessage, []byte(msg))
		if _, got, err := ws.ReadMessage(); err != nil || string(got) != msg {
			t.Fatalf("echo %d: %q %v", i, got, err)
		}
		if i%2 == 0 {
			ws.WriteMessage(websocket.TextMessage, []byte(msg)) // left unread
		}
		ws.NetConn().Close() // gone without a close frame
	}
	netkit.WaitLong(t, "every socket's handler gone", func() bool { return p.InFlight() == 0 })
	netkit.WaitLong(t, "every relay's goroutines gone", func() bool { return runtime.NumGoroutine() <= before })
	abrupt := 0
	for _, f := range rec.All() {
		if strings.HasPrefix(f.Env.Headers["ws-close"], "1006 the client's side ended without a close frame") && f.Dir == wire.DirClient {
			abrupt++
		}
	}
	if abrupt != 21 { // the warm-up socket's and the twenty's
		t.Errorf("%d abrupt ends recorded, want 21", abrupt)
	}
}

// TestWebSocketBytesClose: Close ends the WebSockets open through the
// proxy, so a client reading one sees it end.
func TestWebSocketBytesClose(t *testing.T) {
	p, _, url := startLimitProxy(t, &limitUpstream{}, HTTPProxyOptions{})
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ended := make(chan error, 1)
	go func() { _, _, err := ws.ReadMessage(); ended <- err }() // reader: ends with the socket
	netkit.WaitLong(t, "the socket in flight", func() bool { return p.InFlight() == 1 })
	p.Close()
	if err := within(t, ended, "the socket to end after Close"); err == nil {
		t.Fatal("read a message, want the socket's end")
	}
	netkit.WaitLong(t, "the handler gone", func() bool { return p.InFlight() == 0 })
}
