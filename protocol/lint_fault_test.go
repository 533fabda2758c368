package protocol

import (
	"strings"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// TestLintAltered checks that lint judges what each side received when
// acpscope altered traffic, and names the alteration behind a finding.
func TestLintAltered(t *testing.T) {
	open := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`,
	}
	const (
		prompt  = `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`
		prompt2 = `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"changed"}]}}`
		answer  = `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`
	)
	plan := func(id uint64, action, stage string) *Fault {
		return &Fault{ID: id, Action: action, Stage: stage, Rule: "r", By: ByPlan}
	}
	type line struct {
		dir   wire.Dir
		body  string
		fault *Fault
	}
	tests := []struct {
		name  string
		lines []line
		want  []string // rule ids, in order
		note  string   // a finding's message must contain it
	}{
		{"answer dropped", []line{{wire.DirClient, prompt, nil}, {wire.DirAgent, answer, plan(1, ActionDrop, StageDropped)}},
			[]string{"jsonrpc/unanswered", "acpscope/altered"}, "its answer #6 was dropped (drop by rule r, #1)"},
		{"request rewritten", []line{{wire.DirClient, prompt, plan(1, ActionRewrite, StageReplaced)}, {wire.DirClient, prompt2, plan(1, ActionRewrite, StageForwarded)}, {wire.DirAgent, answer, nil}},
			[]string{"acpscope/altered"}, "acpscope altered 2 messages"},
		{"answered on behalf", []line{{wire.DirClient, prompt, plan(1, ActionAnswer, StageDropped)}, {wire.DirAgent, answer, plan(1, ActionAnswer, StageInjected)}},
			[]string{"acpscope/altered"}, ""},
		{"answer duplicated", []line{{wire.DirClient, prompt, nil}, {wire.DirAgent, answer, nil}, {wire.DirAgent, answer, plan(1, ActionDuplicate, StageInjected)}},
			[]string{"jsonrpc/response-duplicate", "acpscope/altered"}, "#7 was injected (duplicate by rule r, #1)"},
		{"nothing altered", []line{{wire.DirClient, prompt, nil}, {wire.DirAgent, answer, nil}}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msgs []Msg
			for i, b := range open {
				dir := wire.DirClient
				if i%2 == 1 {
					dir = wire.DirAgent
				}
				msgs = append(msgs, FromLine(uint64(i+1), dir, []byte(b)))
			}
			for _, l := range tt.lines {
				m := FromLine(uint64(len(msgs)+1), l.dir, []byte(l.body))
				m.Fault = l.fault
				msgs = append(msgs, m)
			}
			found := Lint(msgs, LintOptions{Finished: true})
			var got []string
			noted := tt.note == ""
			for _, f := range found {
				got = append(got, f.Rule)
				noted = noted || strings.Contains(f.Message, tt.note)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("findings %q, want %q:\n%s", got, tt.want, dump(found))
			}
			if !noted {
				t.Errorf("no finding says %q:\n%s", tt.note, dump(found))
			}
		})
	}
}
