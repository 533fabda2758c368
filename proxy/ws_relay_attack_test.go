package proxy

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/internal/wsframe"
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

// TestRelayLegRoomFollowsArrival: a frame's header declares its length
// before any of it comes. The room a leg takes to gather the message
// stays within trustRatio times what has arrived (or trustedLen), so a
// peer declaring 200 MiB and sending 3 bytes has the proxy hold no more
// than a megabyte; whatever was sent still passes on, and a message that
// arrives whole is recorded whole.
func TestRelayLegRoomFollowsArrival(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		in       []byte
		sent     int  // payload bytes in in
		recorded bool // the message is whole
	}{
		{"3 bytes of a frame declaring 200 MiB", cutFrame(wsframe.Binary, true, 200*mib, 3), 3, false},
		{"1.5 MiB of 16 MiB", cutFrame(wsframe.Text, true, 16*mib, 3*mib/2), 3 * mib / 2, false},
		{"2.5 MiB of 16 MiB", cutFrame(wsframe.Text, true, 16*mib, 5*mib/2), 5 * mib / 2, false},
		{"a continuation declaring 200 MiB after 1 MiB", append(wsFrame(false, false, wsframe.Text, bytes.Repeat([]byte("a"), mib), nil),
			cutFrame(wsframe.Continuation, true, 200*mib, 10)...), mib + 10, false},
		// the pool rounds 8 MiB and 8 bytes up to 16: the jump waits for 2 MiB
		{"1 MiB and a byte of 8 MiB and 8 bytes", cutFrame(wsframe.Text, true, 8*mib+8, mib+1), mib + 1, false},
		{"a continuation declaring 7 MiB after 1 MiB", append(wsFrame(false, false, wsframe.Text, bytes.Repeat([]byte("a"), mib), nil),
			cutFrame(wsframe.Continuation, true, 7*mib+8, 10)...), mib + 10, false},
		{"20 MiB in one frame", wsFrame(true, false, wsframe.Text, bytes.Repeat([]byte("b"), 20*mib), nil), 20 * mib, true},
		{"200 B", wsFrame(true, false, wsframe.Text, bytes.Repeat([]byte("c"), 200), nil), 200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &netkit.Recorder{}
			out, l, err := driveLeg(tc.in, 256*mib, true, rec)
			if !bytes.Equal(out, tc.in) {
				t.Fatalf("passed %d of %d bytes (%v)", len(out), len(tc.in), err)
			}
			if bound := max(trustedLen, trustRatio*tc.sent); cap(l.msg) > bound {
				t.Errorf("held room for %d bytes after %d arrived, want at most %d", cap(l.msg), tc.sent, bound)
			}
			var bodies []int
			for _, f := range rec.All() {
				bodies = append(bodies, len(f.Body))
			}
			if want := []int{tc.sent}; tc.recorded && !slices.Equal(bodies, want) || !tc.recorded && len(bodies) > 0 {
				t.Errorf("recorded messages of %v bytes; whole: %v", bodies, tc.recorded)
			}
		})
	}
}

// cutFrame is the header of a frame declaring declared bytes, and the
// first sent of them.
func cutFrame(op wsframe.Opcode, fin bool, declared, sent int) []byte {
	h := wsFrame(fin, false, op, nil, nil)[:1]
	h = binary.BigEndian.AppendUint64(append(h, 127), uint64(declared))
	return append(h, bytes.Repeat([]byte("x"), sent)...)
}

// TestMessageRoom: room doubles with what arrives, jumps to the frame's
// declared end once a trustRatio-th of it has come, and ends a
// message's last frame exactly.
func TestMessageRoom(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                 string
		need, have, frameEnd int
		fin                  bool
		want                 int
	}{
		{"doubles while little has come", mib + 1, mib, 100 * mib, true, 2 * mib},
		{"jumps once an eighth has come", 16*mib + 1, 16 * mib, 100 * mib, true, 100 * mib},
		{"a whole frame at once", 100 * mib, mib, 100 * mib, true, 100 * mib},
		{"jumps within a fragment", 9 * mib, 8 * mib, 64 * mib, false, 64 * mib},
		{"a last frame ends exactly", 2*mib + 1, 2 * mib, 3 * mib, true, 3 * mib},
		{"a fragment that is not last doubles past its end", 2*mib + 1, 2 * mib, 3 * mib, false, 4 * mib},
		{"more than double needed", 10 * mib, 2 * mib, 200 * mib, false, 10 * mib},
		{"waits for an eighth of the buffer the pool gives", mib + 1, mib, 8*mib + 8, true, 2 * mib},
		{"then jumps", 2*mib + 1, 2 * mib, 8*mib + 8, true, 8*mib + 8},
		{"an eighth rounds up", 4 * mib, 2 * mib, 32*mib + 7, true, 4 * mib},
		{"and is reached", 4*mib + 1, 2 * mib, 32*mib + 7, true, 32*mib + 7},
		{"a frame's end at an int's limit", mib + 1, mib, math.MaxInt, true, 2 * mib},
	} {
		if got := messageRoom(tc.need, tc.have, tc.frameEnd, tc.fin); got != tc.want {
			t.Errorf("%s: room %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRelayLegMalformed: a frame no peer may send (a length with its top
// bit set, a control frame over 125 bytes) is recorded once, as a 1002
// from the side that sent it, and passes on as it came up to the limit,
// whatever frames came before it; the leg then ends.
func TestRelayLegMalformed(t *testing.T) {
	bad := []byte{0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0}
	longPing := []byte{0x89, 0x7e, 0x10, 0x00} // 4096 bytes declared
	first := wsFrame(true, false, wsframe.Text, []byte(`{"jsonrpc":"2.0","method":"x"}`), nil)
	for _, tc := range []struct {
		name   string
		in     []byte
		passed int
	}{
		{"a bad header and less than the limit", append(bytes.Clone(bad), bytes.Repeat([]byte("z"), 500)...), len(bad) + 500},
		{"a bad header and more than a read buffer", append(bytes.Clone(bad), bytes.Repeat([]byte("z"), 6000)...), limit1K},
		{"a frame, then a bad header", bytes.Join([][]byte{first, bad, bytes.Repeat([]byte("z"), 6000)}, nil), len(first) + limit1K},
		{"a ping of 4096 bytes", append(bytes.Clone(longPing), bytes.Repeat([]byte("p"), 4096)...), limit1K},
		{"a frame, then a long ping cut short", bytes.Join([][]byte{first, longPing, []byte("pp")}, nil), len(first) + len(longPing) + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &netkit.Recorder{}
			out, _, err := driveLeg(tc.in, limit1K, true, rec)
			if !bytes.Equal(out, tc.in[:tc.passed]) || !errors.Is(err, errMalformed) {
				t.Errorf("passed %d bytes, ended by %v; want the first %d, ended as malformed", len(out), err, tc.passed)
			}
			var closes []string
			for _, f := range rec.All() {
				if c := f.Env.Headers["ws-close"]; c != "" && f.Dir == wire.DirAgent {
					closes = append(closes, c)
				}
			}
			if len(closes) != 1 || !strings.HasPrefix(closes[0], "1002 the agent's side sent a malformed WebSocket frame") ||
				!strings.HasSuffix(closes[0], "up to --max-message-size (1KiB)") {
				t.Errorf("recorded closes %q; want one 1002 naming the agent's side and the limit", closes)
			}
		})
	}
}

// TestRelayLegTrustsWhatASideSent: once a side has sent a message whole,
// a frame gets its room at once if the buffer that takes is within twice
// that message, and otherwise the largest buffer within it.
func TestRelayLegTrustsWhatASideSent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name            string
		sent, declared  int
		atLeast, atMost int
		limit           int64 // 256 MiB when 0
	}{
		{"a message like it", 3 * mib, 3 * mib, 3 * mib, 4 * mib, 0},
		{"its buffer past twice the message", 3 * mib, 5 * mib, 4 * mib, 4 * mib, 0},
		{"far past it", 3 * mib, 200 * mib, 4 * mib, 4 * mib, 0},
		{"after a message a byte over 1 MiB", mib + 1, 200 * mib, 2 * mib, 2 * mib, 0},
		{"past the pool's sizes", 10 * mib, 200 * mib, 20 * mib, 20 * mib, 0},
		// the limit bounds what a frame declares, not the trust
		{"a message like it, under a limit below its buffer", 9 * mib, 9 * mib, 9 * mib, 16 * mib, 10 * mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := wsFrame(true, false, wsframe.Binary, bytes.Repeat([]byte("w"), tc.sent), nil)
			in := append(whole, cutFrame(wsframe.Binary, true, tc.declared, 10)...)
			limit := cmp.Or(tc.limit, 256*mib)
			out, l, err := driveLeg(in, limit, true, &netkit.Recorder{})
			if !bytes.Equal(out, in) {
				t.Fatalf("passed %d of %d bytes (%v)", len(out), len(in), err)
			}
			if c := cap(l.msg); c < tc.atLeast || c > tc.atMost || c > max(trustedLen, 2*tc.sent) {
				t.Errorf("room for %d bytes after 10 of %d arrived; want %d to %d", c, tc.declared, tc.atLeast, tc.atMost)
			}
		})
	}
}

// TestWebSocketMalformedThroughTheProxy: through the proxy, a client's
// ping declaring 4096 bytes reaches a lenient upstream as sent, up to the
// limit, is recorded once as the client's 1002, and ends the socket on
// both sides.
func TestWebSocketMalformedThroughTheProxy(t *testing.T) {
	got := make(chan []byte, 1)
	_, rec, url := startLimitProxy(t, rawUpstream(t, nil, got), HTTPProxyOptions{MaxMessageSize: limit1K})
	c, br, _ := rawClient(t, strings.TrimSuffix(url, "/acp"), "")
	// a masked ping declaring 4096 bytes; writing it may fail once the
	// proxy has closed the socket
	ping := append([]byte{0x89, 0xfe, 0x10, 0x00, 1, 2, 3, 4}, bytes.Repeat([]byte("p"), 4096)...)
	go c.Write(ping)
	if _, err := io.Copy(io.Discard, br); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the client's socket stayed open a minute after the malformed frame")
	}
	if upstream := within(t, got, "the upstream's side to end"); !bytes.Equal(upstream, ping[:limit1K]) {
		t.Errorf("the upstream got %d bytes; want the first %d of the ping", len(upstream), limit1K)
	}
	var closes []string
	for _, f := range rec.All() {
		if c := f.Env.Headers["ws-close"]; c != "" {
			closes = append(closes, f.Dir.String()+": "+c)
		}
	}
	want := "client: 1002 the client's side sent a malformed WebSocket frame (a control frame over 125 bytes: 4096)"
	if len(closes) != 1 || !strings.HasPrefix(closes[0], want) {
		t.Errorf("recorded closes %q; want one beginning %q", closes, want)
	}
}
