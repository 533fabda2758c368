package replay

import (
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/demo"
)

// TestReplayAsAgentLogReadsWell checks the replaying agent's log lines: a
// notification has no id to show (no "[]"), and counts agree with their
// nouns ("1 difference").
func TestReplayAsAgentLogReadsWell(t *testing.T) {
	cancelled := recordDemo(t, demo.AgentOptions{}, demo.ClientOptions{Cancel: true})
	tests := []struct {
		name   string
		client demo.ClientOptions
		want   string
		absent []string
	}{
		{"notification", demo.ClientOptions{Cancel: true}, "replay: session/cancel matched recorded #", []string{"[]"}},
		{"one difference", demo.ClientOptions{Cancel: true, Cwd: "/elsewhere"},
			`replay: session/new [1] matched recorded #3 with 1 difference (first: cwd: "` + demo.DefaultCwd + `" → "/elsewhere")`,
			[]string{"[]", "1 differences"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, log, _ := serveToDemoClient(t, cancelled, tt.client)
			if !strings.Contains(log, tt.want) {
				t.Errorf("log lacks %q:\n%s", tt.want, log)
			}
			for _, a := range tt.absent {
				if strings.Contains(log, a) {
					t.Errorf("log says %q:\n%s", a, log)
				}
			}
		})
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{{0, "0 notes"}, {1, "1 note"}, {2, "2 notes"}}
	for _, tt := range tests {
		if got := Count(tt.n, "note", "notes"); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
