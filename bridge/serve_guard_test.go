package bridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// markerAgent wraps the test agent so that each start appends to a file:
// the proof that a request did, or did not, start an agent.
func markerAgent(t *testing.T) (argv []string, started func() int) {
	marker := filepath.Join(t.TempDir(), "started")
	argv = append([]string{"/bin/sh", "-c", `echo x >> "$0"; exec "$@"`, marker}, agentArgv("acp")...)
	return argv, func() int {
		b, _ := os.ReadFile(marker)
		return strings.Count(string(b), "x")
	}
}

// TestServeGuard sends serve the requests of DNS rebinding and of other
// sites' pages, and requests without the token: each is refused with
// the status that says why, before any agent starts, and recorded.
func TestServeGuard(t *testing.T) {
	argv, started := markerAgent(t)
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.Argv, o.AuthToken = argv, netkit.GoodToken })
	for _, tt := range netkit.RefusedProbes() {
		t.Run(tt.Name, func(t *testing.T) {
			status, body := tt.P.Send(t, f.http.URL)
			if status != tt.Want || !strings.HasPrefix(body, "acpscope serve: refused: ") || !strings.Contains(body, tt.Says) {
				t.Fatalf("got %d %q, want %d saying %q", status, body, tt.Want, tt.Says)
			}
			if n := started(); n != 0 || f.srv.Conns() != 0 {
				t.Fatalf("a refused request started %d agents (%d connections)", n, f.srv.Conns())
			}
		})
	}
	for _, want := range []int{401, 403} {
		if !f.rec.HasStatus(want) {
			t.Errorf("no %d recorded", want)
		}
	}
}

// TestServeGuardAllows checks that what the allow-lists allow still
// works: a loopback name, --allow-host, --allow-origin and a page of
// serve's own origin, over POST and WebSocket, each starting its agent.
func TestServeGuardAllows(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*ServeOptions)
		p    netkit.Probe
		want int
	}{
		{"POST as localhost", nil, netkit.NewProbe("POST", "localhost:PORT", "", netkit.GoodToken), 200},
		{"WS as localhost", nil, netkit.NewProbe("WS", "localhost:PORT", "", netkit.GoodToken), 101},
		{"POST from our own page", nil, netkit.NewProbe("POST", "", "http://127.0.0.1:PORT", netkit.GoodToken), 200},
		{"WS from our own page", nil, netkit.NewProbe("WS", "", "http://127.0.0.1:PORT", netkit.GoodToken), 101},
		{"POST with --allow-host", func(o *ServeOptions) { o.AllowHosts = []string{"evil.example"} }, netkit.NewProbe("POST", netkit.EvilHost, "", netkit.GoodToken), 200},
		{"WS with --allow-host", func(o *ServeOptions) { o.AllowHosts = []string{"evil.example"} }, netkit.NewProbe("WS", netkit.EvilHost, netkit.EvilOrigin, netkit.GoodToken), 101},
		{"POST with --allow-origin", func(o *ServeOptions) { o.AllowOrigins = []string{"http://app.example"} }, netkit.NewProbe("POST", "", "http://app.example", netkit.GoodToken), 200},
		{"WS with --allow-origin", func(o *ServeOptions) { o.AllowOrigins = []string{"http://app.example"} }, netkit.NewProbe("WS", "", "http://app.example", netkit.GoodToken), 101},
		{"GET reaches the routing", nil, netkit.NewProbe("GET", "localhost:PORT", "", netkit.GoodToken), 404},
		{"DELETE reaches the routing", nil, netkit.NewProbe("DELETE", "localhost:PORT", "", netkit.GoodToken), 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, started := markerAgent(t)
			f := startServe(t, netkit.H1, func(o *ServeOptions) {
				o.Argv, o.AuthToken = argv, netkit.GoodToken
				if tt.mod != nil {
					tt.mod(o)
				}
			})
			status, body := tt.p.Send(t, f.http.URL)
			if status != tt.want {
				t.Fatalf("got %d %q, want %d", status, body, tt.want)
			}
			if tt.want == 200 || tt.want == 101 {
				netkit.WaitLong(t, "the agent to start", func() bool { return started() == 1 })
			}
		})
	}
}
