package protocol

import (
	"testing"

	"github.com/acpscope/acpscope/wire"
)

func lines(t testing.TB, spec ...string) []Msg {
	t.Helper()
	var msgs []Msg
	for i := 0; i+1 < len(spec); i += 2 {
		dir := wire.DirClient
		if spec[i] == "agent" {
			dir = wire.DirAgent
		}
		msgs = append(msgs, FromLine(uint64(len(msgs)+1), dir, []byte(spec[i+1])))
	}
	return msgs
}

func TestRunOutputs(t *testing.T) {
	run := `{"jsonrpc":"2.0","id":2,"method":"agents/run","params":{"name":"gpa","input":{"text":"Howdy!"},"_meta":{"progressToken":"abc123"}}}`
	progress := func(delta string) string {
		return `{"jsonrpc":"2.0","method":"notifications/agents/run/progress","params":{"progressToken":"abc123","delta":` + delta + `}}`
	}
	tests := []struct {
		name     string
		msgs     []string
		mismatch bool
		deltas   int
	}{
		{"matches", []string{"client", run, "agent", progress(`{"text":"Howd"}`), "agent", progress(`{"text":"y back at ya!"}`),
			"agent", `{"jsonrpc":"2.0","id":2,"result":{"output":{"text":"Howdy back at ya!"}}}`}, false, 2},
		{"differs", []string{"client", run, "agent", progress(`{"text":"Howd"}`),
			"agent", `{"jsonrpc":"2.0","id":2,"result":{"output":{"text":"Howdy back at ya!"}}}`}, true, 1},
		{"cannot merge", []string{"client", run, "agent", progress(`{"text":"Howd"}`), "agent", progress(`{"text":1}`)}, true, 2},
		{"other token ignored", []string{"client", run,
			"agent", `{"jsonrpc":"2.0","method":"notifications/agents/run/progress","params":{"progressToken":"zzz","delta":{"text":"x"}}}`,
			"agent", `{"jsonrpc":"2.0","id":2,"result":{"output":{"text":"y"}}}`}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := RunOutputs(lines(t, tt.msgs...))
			if len(runs) != 1 {
				t.Fatalf("got %d runs", len(runs))
			}
			r := runs[0]
			if r.Agent != "gpa" || r.Token != `"abc123"` || len(r.DeltaSeqs) != tt.deltas || r.Mismatch() != tt.mismatch {
				t.Errorf("run = %+v, mismatch %v", r, r.Mismatch())
			}
		})
	}
}
