package bridge

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// TestConnectInitAnswerFirst runs connect against a server that answers
// initialize with a JSON reply while its connection stream already holds
// a notification, written with the stream's headers: the editor must
// see initialize's answer first, as the agent sent it first. The answer
// is large, so connect takes a while to pass it on, the window in which
// the notification could overtake it.
func TestConnectInitAnswerFirst(t *testing.T) {
	tests := []struct {
		name    string
		ordered bool // the server numbers its events (HeaderEventOrder)
	}{
		{"numbered events", true},
		{"unnumbered events", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := netkit.StartServer(t, netkit.H1, earlyNotifyServer(tt.ordered))
			for round := 0; round < 5; round++ {
				r := startConnect(t, ConnectOptions{URL: hs.URL + "/acp"})
				r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
				first, second := <-r.lines, <-r.lines
				if !strings.HasPrefix(first, `{"jsonrpc":"2.0","id":0,"result"`) || !strings.Contains(second, `"_test/early"`) {
					t.Fatalf("round %d: the editor got %.80q then %.80q; want initialize's answer, then the notification", round, first, second)
				}
				r.finish(t)
			}
		})
	}
}

// earlyNotifyServer answers initialize with JSON and opens every
// connection stream with a notification already in it; DELETE ends it.
func earlyNotifyServer(ordered bool) http.Handler {
	var conns atomic.Int64
	pad := strings.Repeat("x", 16<<20)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			w.Header().Set(acphttp.HeaderConnectionID, fmt.Sprintf("c%d", conns.Add(1)))
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"_meta":{"pad":"%s"}}}`, pad)
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			if ordered {
				w.Header().Set(HeaderEventOrder, "connection")
			}
			fmt.Fprint(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"_test/early\"}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
}
