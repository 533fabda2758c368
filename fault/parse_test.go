package fault

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		field     string
		msg       string
	}{
		{"empty", "", 0, "", "empty"},
		{"not a mapping", "- a\n", 1, "", "mapping"},
		{"no rules", "seed: 1\n", 1, "rules", "missing"},
		{"rules not a list", "rules: 3\n", 1, "rules", "list"},
		{"bad yaml", "rules:\n  - drop: [\n", 2, "", "not valid YAML"},
		{"unknown top", "rules:\n  - drop: true\nsede: 1\n", 3, "sede", "unknown field"},
		{"unknown rule field", "rules:\n  - drop: true\n    dlay: 1s\n", 3, "rules[0].dlay", "known: name"},
		{"bad filter", "rules:\n  - match: 'method:'\n    drop: true\n", 2, "rules[0].match", "at byte"},
		{"bad delay", "rules:\n  - delay: 5x\n", 2, "rules[0].delay", "not a duration"},
		{"bad range", "rules:\n  - delay: 2s..1s\n", 2, "rules[0].delay", "upper bound"},
		{"bad bool", "rules:\n  - drop: maybe\n", 2, "rules[0].drop", "true or false"},
		{"bad probability", "rules:\n  - drop: true\n    probability: 2\n", 3, "rules[0].probability", "probability"},
		{"negative count", "rules:\n  - duplicate: -1\n", 2, "rules[0].duplicate", "out of range"},
		{"no action", "rules:\n  - match: dir:agent\n", 2, "rules[0]", "no action"},
		{"drop and delay", "rules:\n  - drop: true\n    delay: 1s\n", 2, "rules[0]", "not delivered"},
		{"answer both", "rules:\n  - answer: {result: 1, error: {code: 1, message: x}}\n", 2, "rules[0].answer", "exactly one"},
		{"answer bad error", "rules:\n  - answer: {error: {code: x}}\n", 2, "rules[0].answer.error", "code"},
		{"inject no to", "rules:\n  - inject: {message: '{}'}\n", 2, "rules[0].inject", "both"},
		{"inject bad to", "rules:\n  - inject: {to: editor, message: '{}'}\n", 2, "rules[0].inject.to", "agent or client"},
		{"pad size", "rules:\n  - pad: {path: a.b, size: 2TiB}\n", 2, "rules[0].pad.size", "1GiB"},
		{"bad path", "rules:\n  - rewrite: {a..b: 1}\n", 2, "rules[0].rewrite.a..b", "JSON path"},
		{"dup name", "rules:\n  - name: a\n    drop: true\n  - name: a\n    drop: true\n", 4, "rules[1].name", "line 2"},
		{"dup key", "rules:\n  - drop: true\n    drop: false\n", 3, "rules[0].drop", "twice"},
		{"window 1", "rules:\n  - reorder: 1\n", 2, "rules[0].reorder", "window"},
		{"multiline message", "rules:\n  - replace: \"a\\nb\"\n", 2, "rules[0].replace", "one line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("plan.yaml", []byte(tc.src))
			var pe *PlanError
			if !errors.As(err, &pe) || !errors.Is(err, ErrPlan) {
				t.Fatalf("Parse = %v, want a PlanError", err)
			}
			if pe.Line != tc.line || pe.Field != tc.field || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("error %q: line %d field %q, want line %d field %q and %q", err, pe.Line, pe.Field, tc.line, tc.field, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "plan.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestParseFull(t *testing.T) {
	src := `seed: 9
description: everything
rules:
  - name: all
    match: method:session/update and dir:agent
    after: 1
    times: 2
    probability: 50%
    delay: 10ms..20ms
    duplicate: 2
    rewrite:
      params.update.sessionUpdate: bogus
      params.n: 3
    pad: {path: params.x, size: 1KiB}
    truncate: 4000
    corrupt: 1
    inject:
      - {to: agent, message: {jsonrpc: "2.0", method: session/cancel, params: {sessionId: "{{sessionId}}"}}}
    close: true
  - answer: {error: {code: -32603, message: nope}}
    kill: yes
`
	p, err := Parse("p", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasSeed || p.Seed != 9 || len(p.Rules) != 2 {
		t.Fatalf("plan %+v", p)
	}
	r := p.Rules[0]
	if r.Name != "all" || r.Line != 4 || r.After != 1 || r.Times != 2 || r.Probability != 0.5 ||
		r.Delay != (Delay{10 * time.Millisecond, 20 * time.Millisecond}) || r.Dup != 2 || len(r.Rewrite) != 2 ||
		r.Pad.Size != 1024 || r.Truncate != 4000 || r.Corrupt != 1 || !r.Close || len(r.Inject) != 1 {
		t.Errorf("rule 0 = %+v", r)
	}
	if string(r.Rewrite[1].Value) != "3" || string(r.Rewrite[0].Value) != `"bogus"` {
		t.Errorf("rewrite values %s %s", r.Rewrite[0].Value, r.Rewrite[1].Value)
	}
	if got := string(r.Inject[0].Msg); got != `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"{{sessionId}}"}}` {
		t.Errorf("inject message %s", got)
	}
	if r2 := p.Rules[1]; r2.Name != "rule-2" || !r2.Kill || string(r2.Answer.Error) != `{"code":-32603,"message":"nope"}` {
		t.Errorf("rule 1 = %+v", r2)
	}
}

func TestBuiltinsParse(t *testing.T) {
	want := []string{"flaky-agent", "malformed-updates", "oversized-messages", "permission-never-answered", "slow-agent"}
	if got := strings.Join(Builtins(), ","); got != strings.Join(want, ",") {
		t.Fatalf("Builtins() = %s, want %s", got, strings.Join(want, ","))
	}
	for _, name := range want {
		p, err := Load(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		src, _ := Builtin(name)
		if Summary(src) == "" || len(p.Rules) == 0 {
			t.Errorf("%s: no summary or no rules", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range Builtins() {
		src, _ := Builtin(name)
		f.Add(src)
	}
	f.Add([]byte("rules:\n  - drop: true\n"))
	f.Add([]byte("rules:\n  - answer: {result: {a: [1, 2]}}\n    inject: [{to: agent, message: x}]\n"))
	f.Add([]byte("rules: [{rewrite: {a.0.b: {x: y}}, delay: 1ms..2ms}]"))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse("fuzz", src)
		if err != nil {
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a PlanError", err)
			}
			return
		}
		if len(p.Rules) == 0 {
			t.Fatal("a plan without rules parsed")
		}
		for _, r := range p.Rules {
			if r.Name == "" || r.Delay.Max != 0 && r.Delay.Max <= r.Delay.Min {
				t.Fatalf("bad rule %+v", r)
			}
		}
	})
}
