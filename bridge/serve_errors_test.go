package bridge

import (
	"strings"
	"testing"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
)

// TestServeAgentCannotStart checks what a client and serve's stderr say
// when the agent command cannot run: the command given to serve is at
// fault, not an editor's config.
func TestServeAgentCannotStart(t *testing.T) {
	tests := []struct {
		name string
		argv []string
	}{
		{"absolute path", []string{"/nonexistent"}},
		{"not in PATH", []string{"acpscope-no-such-agent", "--acp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr testkit.Buffer
			f := startServe(t, netkit.H1, func(o *ServeOptions) { o.Argv, o.Stderr = tt.argv, &stderr })
			resp := f.do(t, "POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`, "Content-Type", netkit.CTJSON)
			body := netkit.ReadAll(t, resp.Body)
			want := `cannot start agent "` + tt.argv[0] + `"`
			if resp.StatusCode != 502 || !strings.Contains(body, want) || !strings.Contains(body, agent.HintServe) || strings.Contains(body, "editor") {
				t.Errorf("answer %d %q; want 502 naming the command and %q", resp.StatusCode, body, agent.HintServe)
			}
			if got := stderr.String(); !strings.Contains(got, want) || !strings.Contains(got, agent.HintServe) {
				t.Errorf("serve's stderr %q does not say why", got)
			}
		})
	}
}
