package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/gorilla/websocket"
)

// TestConnectLetsSilentServerGo: connect pings the WebSocket server it
// dialed. A server that answers (its library does while it reads) keeps
// the connection however quiet; one that reads nothing is lost once
// three intervals pass without a pong, and connect says why; so is one
// that keeps sending pongs but takes none of the editor's messages.
func TestConnectLetsSilentServerGo(t *testing.T) {
	const interval = time.Second // a loaded machine must not starve a live server's pongs for 3 s
	wait := acphttp.PeerMissedPings * interval
	tests := []struct {
		name  string
		reads bool
		pongs bool // unasked, so it looks alive without reading
		want  string
	}{
		{"server answers pings", true, false, ""},
		{"server reads nothing", false, false, fmt.Sprintf("no answer to pings for %v", wait)},
		{"server pongs but takes nothing", false, true, "writing to the WebSocket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := websocket.Upgrader{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ws, err := up.Upgrade(w, r, nil)
				if err != nil {
					return
				}
				defer ws.Close()
				for tt.pongs {
					if ws.WriteControl(websocket.PongMessage, nil, time.Now().Add(time.Second)) != nil {
						return
					}
					time.Sleep(interval / 4)
				}
				if tt.reads {
					for {
						if _, _, err := ws.ReadMessage(); err != nil {
							return
						}
					}
				}
				<-r.Context().Done()
			}))
			defer srv.Close()
			stdinR, stdinW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- Connect(context.Background(), ConnectOptions{URL: "ws" + strings.TrimPrefix(srv.URL, "http"),
					Stdin: stdinR, Stdout: io.Discard, KeepAlive: interval})
			}()
			if tt.pongs {
				go func() { // more than the socket's buffers hold, until connect stops taking it
					line := []byte(`{"jsonrpc":"2.0","method":"x/n","params":{"pad":"` + strings.Repeat("a", 64<<10) + `"}}` + "\n")
					for {
						if _, err := stdinW.Write(line); err != nil {
							return
						}
					}
				}()
				defer stdinR.Close()
			}
			if !tt.reads {
				select {
				case err := <-done:
					if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), tt.want) {
						t.Fatalf("got %v, want ErrConnectionLost saying %q", err, tt.want)
					}
				case <-time.After(netkit.CondWait):
					t.Fatalf("connect did not let a silent server go within %v", netkit.CondWait)
				}
				return
			}
			select {
			case err := <-done:
				t.Fatalf("connect gave up on a server that answers pings: %v", err)
			case <-time.After(2*wait + interval):
			}
			stdinW.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("at the end of stdin: %v", err)
				}
			case <-time.After(netkit.CondWait):
				t.Fatal("connect did not end with stdin")
			}
		})
	}
}
