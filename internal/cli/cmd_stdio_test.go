package cli

import "testing"

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
