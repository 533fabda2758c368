package cli

import (
	"strings"
	"testing"
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
