package cli

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func TestDemoPeerCommands(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{args: []string{"demo-agent", "--mutate", "nope"}, code: 1, stderr: "unknown option value"},
		{args: []string{"demo-agent", "--session-scheme", "x"}, code: 1, stderr: "session scheme"},
		{args: []string{"demo-agent", "stray"}, code: 2, stderr: "takes no arguments"},
		{args: []string{"demo-agent", "--delay", "soon"}, code: 2, stderr: "invalid argument"},
		{args: []string{"demo-client", "--", "/nonexistent/agent"}, code: 1, stderr: "/nonexistent/agent"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.code, tc.stderr)
			}
		})
	}
	var overview bytes.Buffer
	Main([]string{"--help"}, &overview, &overview)
	if strings.Contains(overview.String(), "demo-agent") || strings.Contains(overview.String(), "demo-client") {
		t.Errorf("the demo peers should stay out of the command list:\n%s", overview.String())
	}
}

// TestDemoPeersOverPipes wires the two hidden commands to each other with
// pipes, the way a user or a script would.
func TestDemoPeersOverPipes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := t.TempDir() + "/acpscope"
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/acpscope/acpscope").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "demo-client", "--cancel", "--", bin, "demo-agent", "--delay", "0").CombinedOutput()
	if err != nil {
		t.Fatalf("demo-client: %v\n%s", err, out)
	}
	for _, want := range []string{"→ end_turn", "→ cancelled", "[acpscope-demo-agent] input closed, exiting"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
