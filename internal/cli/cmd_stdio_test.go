package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
)

func TestAgentName(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "@zed-industries/claude-code-acp"}, "claude-code-acp"},
		{[]string{"npx", "-y", "opencode-ai@1.17.4", "acp"}, "opencode-ai"},
		{[]string{"/usr/local/bin/gemini", "--experimental-acp"}, "gemini"},
		{[]string{"python3", "-u", "agents/my_agent.py"}, "my_agent"},
		{[]string{"codex-acp"}, "codex-acp"},
		{[]string{"gemini-2.5"}, "gemini-2.5"},
		{[]string{"/usr/local/bin/acpscope", "demo-agent", "--mutate", "title"}, "demo-agent"},
		{[]string{"acpscope", "--", "gemini"}, "acpscope"},
	}
	for _, tt := range tests {
		if got := agentName(tt.argv); got != tt.want {
			t.Errorf("agentName(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

// TestStdioFailedAtOnceQuotesStderr: an agent that explains itself on
// stderr before failing gets its last line quoted, not advice to check a
// command line that was fine.
func TestStdioFailedAtOnceQuotesStderr(t *testing.T) {
	tests := []struct {
		name, script string
		want, absent string
	}{
		{"one line", `echo "boom: missing API key" >&2; exit 3`,
			`the agent exited with status 3 at once; its stderr (above) ends "boom: missing API key"`, "before saying anything"},
		{"last of several", `printf 'starting\nError: bad flag --x\n\n' >&2; exit 2`,
			`the agent exited with status 2 at once; its stderr (above) ends "Error: bad flag --x"`, `ends "starting"`},
		{"blank stderr", `echo >&2; exit 4`,
			"the agent exited with status 4 at once, after writing to stderr: see its stderr above", "before saying anything"},
		{"silent", `exit 5`,
			"the agent exited with status 5 at once, before saying anything: check its command line", "stderr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, nil, "--no-capture", "--", "sh", "-c", tt.script)
			if !strings.Contains(res.stderr, tt.want) || strings.Contains(res.stderr, tt.absent) {
				t.Errorf("stderr %q\nwant %q, without %q", res.stderr, tt.want, tt.absent)
			}
		})
	}
}

// TestCommitEvery: --commit-every reaches the writer (the capture says
// what window it was written in, and still holds everything once the
// proxy exits), and a window outside capture's bounds stops the command
// before it starts anything, naming the range.
func TestCommitEvery(t *testing.T) {
	line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}`
	tests := []struct {
		name   string
		flags  []string
		code   int
		stderr string
		window time.Duration // in the capture's metadata when code is 0
	}{
		{"default", nil, 0, "", capture.DefaultCommitEvery},
		{"wider", []string{"--commit-every", "2s"}, 0, "", 2 * time.Second},
		{"shortest", []string{"--commit-every", "5ms"}, 0, "", 5 * time.Millisecond},
		{"too short", []string{"--commit-every", "1ms"}, 2, "1ms is outside the range 5ms to 10s", 0},
		{"too long", []string{"--commit-every", "1m"}, 2, "1m is outside the range 5ms to 10s", 0},
		{"not a duration", []string{"--commit-every", "often"}, 2, `invalid argument "often" for "--commit-every"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.acpscope")
			args := append(append([]string{"--quiet", "--capture", path}, tt.flags...), "--", "sh", "-c", "echo '"+line+"'")
			res := runCLI(t, nil, args...)
			if res.code != tt.code || !strings.Contains(res.stderr, tt.stderr) {
				t.Fatalf("exit %d, want %d; stderr %q, want it to contain %q", res.code, tt.code, res.stderr, tt.stderr)
			}
			if tt.code != 0 {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("a refused window left a capture behind (stat: %v)", err)
				}
				return
			}
			if res.stdout != line+"\n" {
				t.Errorf("forwarded %q, want the agent's line", res.stdout)
			}
			r, err := capture.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.Meta().CommitEvery; got != tt.window {
				t.Errorf("capture written in a %v window, want %v", got, tt.window)
			}
			if n, err := r.Count(); err != nil || n != 1 {
				t.Errorf("capture holds %d records (%v), want the agent's one line", n, err)
			}
		})
	}
	// Every command that records takes the flag, bench included (for (d)).
	for _, cmd := range []string{"proxy", "serve", "connect", "bench"} {
		if res := runCLI(t, nil, cmd, "--commit-every", "20s"); res.code != 2 || !strings.Contains(res.stderr, "20s is outside the range 5ms to 10s") {
			t.Errorf("%s --commit-every 20s: exit %d, stderr %q", cmd, res.code, res.stderr)
		}
	}
}
