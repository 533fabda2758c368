package fault_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// msg is a test message: m with params.k = k.
func msg(k int) string {
	return `{"jsonrpc":"2.0","method":"m","params":{"k":` + strconv.Itoa(k) + `}}`
}

// byDir keeps the summary lines of records travelling in dir, in order.
func byDir(recs []capture.Record, dir wire.Dir) []string {
	var keep []capture.Record
	for _, r := range recs {
		if r.Dir == dir && r.Kind != wire.KindStderr {
			keep = append(keep, r)
		}
	}
	return summary(keep)
}

// TestActions runs the echo test agent behind the real stdio proxy under
// each fault action and checks what the editor received byte for byte
// (the agent echoes what it received, so with rules on the editor's
// direction that is also what the agent received) and what the capture
// recorded in each direction.
func TestActions(t *testing.T) {
	ask := `{"jsonrpc":"2.0","id":1,"method":"ask"}`
	answer := `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`
	tests := []struct {
		name, plan    string
		send          []string
		out           []string
		client, agent []string // capture, per direction
	}{
		{
			name: "drop", plan: "rules: [{match: 'dir:client and params.k=2', drop: true, name: d}]",
			send: []string{msg(1), msg(2), msg(3)}, out: []string{msg(1), msg(3)},
			client: []string{"client " + msg(1), "client " + msg(2) + " [dropped drop d]", "client " + msg(3)},
			agent:  []string{"agent " + msg(1), "agent " + msg(3)},
		},
		{
			name: "delay", plan: "rules: [{match: 'dir:client and params.k=2', delay: 100ms, name: d}]",
			send: []string{msg(1), msg(2), msg(3)}, out: []string{msg(1), msg(2), msg(3)},
			client: []string{"client " + msg(1), "client " + msg(2) + " [forwarded delay d]", "client " + msg(3)},
			agent:  []string{"agent " + msg(1), "agent " + msg(2), "agent " + msg(3)},
		},
		{
			name: "duplicate", plan: "rules: [{match: 'dir:client and params.k=2', duplicate: 2, name: d}]",
			send: []string{msg(1), msg(2), msg(3)}, out: []string{msg(1), msg(2), msg(2), msg(2), msg(3)},
			client: []string{"client " + msg(1), "client " + msg(2) + " [forwarded duplicate d]", "client " + msg(2) + " [injected duplicate d]",
				"client " + msg(2) + " [injected duplicate d]", "client " + msg(3)},
		},
		{
			name: "rewrite", plan: "rules: [{match: 'dir:client and params.k=2', rewrite: {params.k: 9}, name: d}]",
			send: []string{msg(1), msg(2), msg(3)}, out: []string{msg(1), msg(9), msg(3)},
			client: []string{"client " + msg(1), "client " + msg(2) + " [replaced rewrite d]", "client " + msg(9) + " [forwarded rewrite d]", "client " + msg(3)},
			agent:  []string{"agent " + msg(1), "agent " + msg(9), "agent " + msg(3)},
		},
		{
			name: "replace", plan: `rules: [{match: 'dir:client and params.k=2', replace: '{"jsonrpc":"2.0","method":"other"}', name: d}]`,
			send: []string{msg(1), msg(2)}, out: []string{msg(1), `{"jsonrpc":"2.0","method":"other"}`},
			client: []string{"client " + msg(1), "client " + msg(2) + " [replaced replace d]", `client {"jsonrpc":"2.0","method":"other"} [forwarded replace d]`},
		},
		{
			name: "truncate", plan: "rules: [{match: 'dir:client and params.k=2', truncate: 10, name: d}]",
			send: []string{msg(1), msg(2), msg(3)}, out: []string{msg(1), msg(2)[:10], msg(3)},
			client: []string{"client " + msg(1), "client " + msg(2) + " [replaced truncate d]", "client " + msg(2)[:10] + " [forwarded truncate d]", "client " + msg(3)},
		},
		{
			name: "answer", plan: "rules: [{match: 'method:ask', answer: {result: {ok: true}}, name: d}]",
			send: []string{ask, msg(1)}, out: []string{answer, msg(1)},
			client: []string{"client " + ask + " [dropped answer d]", "client " + msg(1)},
			agent:  []string{"agent " + answer + " [injected answer d]", "agent " + msg(1)},
		},
		{
			name: "inject", plan: "rules: [{match: 'dir:client and params.k=2', inject: {to: agent, message: '" + msg(7) + "'}, name: d}]",
			send: []string{msg(1), msg(2), msg(3)}, out: []string{msg(1), msg(2), msg(7), msg(3)},
			client: []string{"client " + msg(1), "client " + msg(2), "client " + msg(7) + " [injected inject d]", "client " + msg(3)},
		},
		{
			name: "agent side", plan: "rules: [{match: 'dir:agent and params.k=2', drop: true, name: d}]",
			send: []string{msg(1), msg(2), msg(3)}, out: []string{msg(1), msg(3)},
			client: []string{"client " + msg(1), "client " + msg(2), "client " + msg(3)},
			agent:  []string{"agent " + msg(1), "agent " + msg(2) + " [dropped drop d]", "agent " + msg(3)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := start(t, tc.plan, fault.Options{})
			r.send(tc.send...)
			r.waitOut(len(tc.out))
			_, out, recs := r.finish()
			if !slices.Equal(out, tc.out) {
				t.Errorf("the editor received\n%s\nwant\n%s", strings.Join(out, "\n"), strings.Join(tc.out, "\n"))
			}
			if got := byDir(recs, wire.DirClient); !slices.Equal(got, tc.client) {
				t.Errorf("capture, editor's side:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.client, "\n"))
			}
			if got := byDir(recs, wire.DirAgent); tc.agent != nil && !slices.Equal(got, tc.agent) {
				t.Errorf("capture, agent's side:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.agent, "\n"))
			}
			checkFaultRecords(t, recs)
		})
	}
}

// checkFaultRecords checks what every altered record must say: a rule or
// a doer, an arrival no later than the record, and a replaced original
// that is never paired.
func checkFaultRecords(t *testing.T, recs []capture.Record) {
	t.Helper()
	for _, r := range recs {
		f := r.Fault
		if f == nil {
			continue
		}
		if f.ID == 0 || f.Rule == "" && f.By != protocol.BySend && f.By != protocol.ByIntercept {
			t.Errorf("record %d: fault %+v names no rule or doer", r.Seq, f)
		}
		if f.Arrived > r.Time && f.Stage != protocol.StageReplaced {
			t.Errorf("record %d: arrived %d after its record time %d", r.Seq, f.Arrived, r.Time)
		}
		if f.Superseded() && r.Peer != 0 {
			t.Errorf("record %d: a replaced original is paired with %d", r.Seq, r.Peer)
		}
	}
}

func TestDelayIsRecordedLate(t *testing.T) {
	r := start(t, "rules: [{match: 'dir:client and params.k=1', delay: 150ms}]", fault.Options{})
	r.send(msg(1))
	r.waitOut(1)
	_, _, recs := r.finish()
	if len(recs) < 1 || recs[0].Fault == nil {
		t.Fatalf("records %q", summary(recs))
	}
	if held := recs[0].Fault.Held(recs[0].Time); held < 150*time.Millisecond {
		t.Errorf("recorded as held %v, want at least 150ms", held)
	}
}

func TestAnswerIsPaired(t *testing.T) {
	r := start(t, "rules: [{match: 'method:ask', answer: {error: {code: -32000, message: no}}}]", fault.Options{})
	r.send(`{"jsonrpc":"2.0","id":"x","method":"ask"}`)
	r.waitOut(1)
	_, out, recs := r.finish()
	if want := `{"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":"no"}}`; len(out) != 1 || out[0] != want {
		t.Fatalf("the editor received %q, want %s", out, want)
	}
	if len(recs) != 2 || recs[1].Peer != recs[0].Seq || recs[1].Method != "ask" || recs[1].ErrorCode != -32000 {
		t.Errorf("records %q, peers %d %d", summary(recs), recs[0].Peer, recs[1].Peer)
	}
}

// TestReorderIsSeeded checks that a window is delivered shuffled, the
// same way on every run with the same seed.
func TestReorderIsSeeded(t *testing.T) {
	plan := "seed: 4\nrules: [{match: 'dir:client', reorder: 5, name: shuffle}]"
	var want []string
	for i := range 5 {
		want = append(want, msg(i))
	}
	var first []string
	for range 2 {
		r := start(t, plan, fault.Options{})
		r.send(want...)
		r.waitOut(5)
		_, out, recs := r.finish()
		if !sameSet(out, want) {
			t.Fatalf("the editor received %q, not a shuffle of %q", out, want)
		}
		// The editor's messages only: an echo may be recorded between
		// two of them, as soon as the first reaches the agent.
		var sent []capture.Record
		for _, rec := range recs {
			if rec.Dir == wire.DirClient {
				sent = append(sent, rec)
			}
		}
		if len(sent) != 5 {
			t.Fatalf("%d records from the editor, want 5: %q", len(sent), summary(recs))
		}
		for _, rec := range sent {
			if rec.Fault == nil || rec.Fault.Action != protocol.ActionReorder || rec.Fault.Stage != protocol.StageForwarded {
				t.Errorf("record %d: fault %+v, want a forwarded reorder", rec.Seq, rec.Fault)
			}
		}
		if first == nil {
			first = out
		} else if !slices.Equal(first, out) {
			t.Errorf("two runs with the same seed delivered\n%q\n%q", first, out)
		}
	}
	if slices.Equal(first, want) {
		t.Errorf("seed 4 left the window in order; pick a seed that shuffles it")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestCorrupt(t *testing.T) {
	r := start(t, "seed: 2\nrules: [{match: 'dir:client', corrupt: 3}]", fault.Options{})
	r.send(msg(1))
	r.waitOut(1)
	_, out, _ := r.finish()
	if len(out) != 1 || len(out[0]) != len(msg(1)) || out[0] == msg(1) {
		t.Fatalf("the editor received %q, want %q with bytes overwritten", out, msg(1))
	}
	diff := 0
	for i := range out[0] {
		if out[0][i] != msg(1)[i] {
			diff++
		}
	}
	if diff > 3 {
		t.Errorf("%d bytes differ, want at most 3", diff)
	}
}

// TestCloseAndKill checks that a rule can end the connection or kill the
// agent: the run ends although the editor never closed its side.
func TestCloseAndKill(t *testing.T) {
	for _, action := range []string{"close", "kill"} {
		t.Run(action, func(t *testing.T) {
			r := start(t, "rules: [{match: 'params.k=2 and dir:client', "+action+": true, after: 0, name: end}]", fault.Options{})
			r.send(msg(1))
			r.waitOut(1)
			r.send(msg(2))
			res, _, recs := r.wait()
			if action == "kill" && res.Exit.SignalName() != "SIGKILL" {
				t.Errorf("the agent ended %+v, want killed", res.Exit)
			}
			found := false
			for _, rec := range recs {
				found = found || rec.Fault != nil && rec.Fault.Action == action && string(rec.Body) == msg(2)
			}
			if !found {
				t.Errorf("no record of the %s: %q", action, summary(recs))
			}
		})
	}
}

// TestAfterTimesProbability checks the counting fields with Check, which
// runs a plan's matching over a capture as a run would.
func TestAfterTimesProbability(t *testing.T) {
	r := start(t, "", fault.Options{})
	var send []string
	for i := range 20 {
		send = append(send, msg(i))
	}
	r.send(send...)
	r.waitOut(20)
	r.finish()
	plan, err := fault.Parse("p", []byte(`seed: 3
rules:
  - {name: third-and-fourth, match: 'dir:client', after: 2, times: 2, drop: true}
  - {name: some, match: 'dir:agent', probability: 0.5, drop: true}
  - {name: never, match: 'method:nothing', drop: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checks, err := fault.Check(plan, src)
	if err != nil {
		t.Fatal(err)
	}
	if c := checks[0]; c.Matched != 20 || c.Acted != 2 {
		t.Errorf("third-and-fourth matched %d, acted on %d (%v), want 20 and 2", c.Matched, c.Acted, c.Seqs)
	}
	if c := checks[1]; c.Matched != 20 || c.Acted == 0 || c.Acted == 20 {
		t.Errorf("some matched %d, acted on %d, want 20 and some", c.Matched, c.Acted)
	}
	again, _ := fault.Check(plan, src)
	if !slices.Equal(again[1].Seqs, checks[1].Seqs) {
		t.Errorf("the same seed acted on %v, then %v", checks[1].Seqs, again[1].Seqs)
	}
	if c := checks[2]; c.Matched != 0 || c.Acted != 0 {
		t.Errorf("never matched %d", c.Matched)
	}
}
