package demo

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// TestGoldenTranscripts pins the demo conversation byte for byte. Replay,
// diff and export tests elsewhere record it and compare against it, so a
// change here must be deliberate: rerun with -update and review the diff.
func TestGoldenTranscripts(t *testing.T) {
	tests := []struct {
		name string
		ao   AgentOptions
		co   ClientOptions
	}{
		{name: "default"},
		{name: "cancel", co: ClientOptions{Cancel: true}},
		{name: "minimal-load", co: ClientOptions{Minimal: true, Load: true, MCPSecret: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := converse(t, tc.ao, tc.co)
			if r.clientErr != nil || r.agentErr != nil {
				t.Fatalf("client error %v, agent error %v", r.clientErr, r.agentErr)
			}
			got := "-- client to agent --\n" + r.toAgent.String() + "-- agent to client --\n" + r.toClient.String()
			path := filepath.Join("testdata", tc.name+".golden")
			if *updateGolden {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				a, b := lineDiff(splitLines(string(want)), splitLines(got))
				t.Errorf("transcript differs from %s (rerun with -update if intended)\nonly in golden: %q\nonly now: %q", path, a, b)
			}
		})
	}
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
