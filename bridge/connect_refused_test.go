package bridge

import (
	"errors"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// TestConnectNeverConnected checks what connect says when it never got a
// connection: no server at the address, or a path that is not the
// endpoint. Nothing was lost, so there is no advice to restart the agent.
func TestConnectNeverConnected(t *testing.T) {
	f := startServe(t, netkit.H1, nil)
	down := "127.0.0.1:" + strings.Split(netkit.FreeAddr(t), ":")[1]
	host := strings.TrimPrefix(f.http.URL, "http://")
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`
	tests := []struct {
		name string
		url  string
		want string
	}{
		{"http server down", "http://" + down + "/acp", "cannot reach the server at http://" + down + "/acp: dial tcp " + down},
		{"ws server down", "ws://" + down + "/acp", "cannot reach the server at ws://" + down + "/acp: dial tcp " + down},
		{"http wrong path", "http://" + host + "/wrong", "the server at http://" + host + " answered 404 Not Found for the path /wrong: check the URL (the ACP endpoint is usually /acp)"},
		{"ws wrong path", "ws://" + host + "/wrong", "the server at ws://" + host + " answered 404 Not Found for the path /wrong: check the URL (the ACP endpoint is usually /acp)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := connectOnce(tt.url, "", initialize)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got %v\nwant %q…", err, tt.want)
			}
			if !errors.Is(err, ErrCannotConnect) || errors.Is(err, ErrConnectionLost) || strings.Contains(err.Error(), "restart") {
				t.Errorf("%v: want ErrCannotConnect without the lost-connection advice", err)
			}
		})
	}
}
