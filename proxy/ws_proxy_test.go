package proxy

import (
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// wsEchoUpstream answers a WebSocket with Acp-Connection-Id on the 101,
// sends a greeting (text) and a binary frame, echoes text messages, and
// closes with 4001 when told "bye".
func wsEchoUpstream(t *testing.T) http.Handler {
	up := websocket.Upgrader{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		c, err := up.Upgrade(w, r, http.Header{acphttp.HeaderConnectionID: {"ws-conn-9"}})
		if err != nil {
			return
		}
		defer c.Close()
		c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"hello"}`))
		c.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2, 0xff})
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if string(msg) == "bye" {
				c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "done"), time.Now().Add(time.Second))
				c.ReadMessage() // the close reply
				return
			}
			c.WriteMessage(mt, msg)
		}
	})
}

func TestWebSocketProxy(t *testing.T) {
	for _, legs := range [][2]netkit.Proto{{netkit.H1, netkit.H1}, {netkit.H1, netkit.TLS}, {netkit.TLS, netkit.H1}, {netkit.TLS, netkit.TLS}} {
		proto, frontProto := legs[1], legs[0]
		t.Run(string(frontProto)+" to "+string(proto), func(t *testing.T) {
			upSrv := netkit.StartServer(t, proto, wsEchoUpstream(t))
			rec := &netkit.Recorder{}
			p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL + "/acp", Recorder: rec, UnsafeUpstreamInsecure: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			front := netkit.StartServer(t, frontProto, p)
			d := websocket.Dialer{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
			url := "ws" + strings.TrimPrefix(front.URL, "http") + "/acp"
			c, resp, err := d.Dial(url, http.Header{"Authorization": {"Bearer tok"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if resp.Header.Get(acphttp.HeaderConnectionID) != "ws-conn-9" {
				t.Errorf("101 lacks Acp-Connection-Id: %v", resp.Header)
			}
			expect := func(wantType int, want string) {
				t.Helper()
				mt, msg, err := c.ReadMessage()
				if err != nil || mt != wantType || string(msg) != want {
					t.Fatalf("got %d %q %v, want %d %q", mt, msg, err, wantType, want)
				}
			}
			expect(websocket.TextMessage, `{"jsonrpc":"2.0","method":"hello"}`)
			expect(websocket.BinaryMessage, "\x00\x01\x02\xff")
			big := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"` + strings.Repeat("y", 3<<20) + `"}}`
			c.WriteMessage(websocket.TextMessage, []byte(big))
			expect(websocket.TextMessage, big)
			c.WriteMessage(websocket.TextMessage, []byte("bye"))
			_, _, err = c.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != 4001 || ce.Text != "done" {
				t.Fatalf("close: %v, want 4001 done", err)
			}
			netkit.ContainsAll(t, rec,
				`1 agent GET http 101 `,
				`1 agent GET ws 0 {"jsonrpc":"2.0","method":"hello"}`,
				"1 agent GET ws 0 \x00\x01\x02\xff",
				`1 client GET ws 0 {"jsonrpc":"2.0","id":1,"method":"x"`,
				`1 agent GET ws 0 {"jsonrpc":"2.0","id":1,"method":"x"`,
			)
			var sawBinary, sawClose bool
			for _, f := range rec.All() {
				sawBinary = sawBinary || f.Flags&wire.FlagBinary != 0
				sawClose = sawClose || f.Env.Headers["ws-close"] == "4001 done"
				if f.Env.Stream == wire.StreamWebSocket && f.Env.ConnectionID != "ws-conn-9" {
					t.Errorf("ws frame without connection id: %+v", f.Env)
				}
			}
			if !sawBinary || !sawClose {
				t.Errorf("binary flagged: %v, close recorded: %v", sawBinary, sawClose)
			}
		})
	}
}

// TestWebSocketProxyRefused checks that an upstream's refusal reaches the
// client as sent and is recorded.
func TestWebSocketProxyRefused(t *testing.T) {
	upSrv := netkit.StartServer(t, netkit.H1, wsEchoUpstream(t))
	rec := &netkit.Recorder{}
	p, _ := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL + "/acp", Recorder: rec})
	defer p.Close()
	front := netkit.StartServer(t, netkit.H1, p)
	_, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(front.URL, "http")+"/acp", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %v %v, want 401", err, resp)
	}
	netkit.ContainsAll(t, rec, "1 agent GET http 401 no token")
}
