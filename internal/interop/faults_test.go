package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// TestFaults runs SDK and demo peers through `acpscope --faults PLAN`
// under every fault action and every ready-made plan, and checks byte for
// byte that each side received exactly what the capture says was
// delivered to it (every change recorded, nothing hidden), and that the
// plan's actions show in the capture as such.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real SDK peers; skipped with -short")
	}
	tests := []struct {
		name    string
		plan    string // a file's text, or a ready-made plan's name
		client  clientPeer
		agent   agentPeer
		actions []string // each must show in the capture
		works   bool     // the conversation still completes
	}{
		{"delay", "rules: [{match: 'dir:agent and method:session/update', delay: 1ms..30ms}]", tsClient, tsAgent, []string{"delay"}, true},
		{"duplicate", "rules: [{match: 'dir:agent and method:session/update', times: 2, duplicate: 1}]", tsClient, tsAgent, []string{"duplicate"}, true},
		{"reorder", "seed: 2\nrules: [{match: 'dir:agent and method:session/update', reorder: 3}]", demoClient, demoAgent, []string{"reorder"}, true},
		{"rewrite", "rules: [{match: 'dir:client and method:session/prompt', rewrite: {params.prompt.0.text: rewritten by acpscope}}]", tsClient, tsAgent, []string{"rewrite"}, true},
		{"drop", "rules: [{match: 'dir:agent and update:agent_message_chunk', times: 1, drop: true}]", tsClient, tsAgent, []string{"drop"}, true},
		{"replace", `rules: [{match: 'dir:agent and kind:response and method:session/prompt', times: 1, replace: '{"jsonrpc":"2.0","id":{{id}},"result":{"stopReason":"end_turn","_meta":{"replacedBy":"acpscope"}}}'}]`, tsClient, tsAgent, []string{"replace"}, true},
		{"truncate", "rules: [{match: 'dir:agent and method:session/update', times: 1, truncate: 30}]", tsClient, tsAgent, []string{"truncate"}, false},
		{"corrupt", "seed: 5\nrules: [{match: 'dir:agent and method:session/update', times: 1, corrupt: 4}]", tsClient, tsAgent, []string{"corrupt"}, false},
		{"answer", "rules: [{match: 'dir:agent and method:session/request_permission', answer: {result: {outcome: {outcome: cancelled}}}}]", goSDKClient, demoAgent, []string{"answer"}, false},
		{"inject", "rules: [{match: 'dir:client and method:session/prompt', times: 1, inject: {to: client, message: {jsonrpc: '2.0', method: session/update, params: {sessionId: '{{sessionId}}', update: {sessionUpdate: agent_message_chunk, content: {type: text, text: injected}}}}}}]", tsClient, tsAgent, []string{"inject"}, true},
		{"close", "rules: [{match: 'dir:client and method:session/prompt', close: true}]", tsClient, tsAgent, []string{"close"}, false},
		{"kill", "rules: [{match: 'dir:client and method:session/prompt', kill: true}]", tsClient, tsAgent, []string{"kill"}, false},
		{"slow-agent", "slow-agent", tsClientOne, tsAgent, []string{"delay"}, true},
		{"flaky-agent", "flaky-agent", demoClientAll, demoAgent, nil, false},
		// Unanswered, the demo agent waits for ever (the question the plan
		// asks), even after a session/cancel; here the connection is then
		// closed, so the run ends.
		{"permission-never-answered", "permission-never-answered", goSDKClient, demoAgent, []string{"drop"}, false},
		{"malformed-updates", "malformed-updates", demoClientAll, demoAgent, nil, false},
		// The TypeScript SDK refuses messages over 32 MiB (MessageTooLargeError).
		{"oversized-messages", "oversized-messages", tsClient, tsAgent, []string{"rewrite"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan, text := tc.plan, tc.plan
			if src, ok := fault.Builtin(tc.plan); ok && tc.name == "permission-never-answered" {
				text = strings.Replace(string(src), "drop: true", "drop: true\n    close: true", 1)
			}
			if strings.Contains(text, "rules") {
				plan = filepath.Join(t.TempDir(), "plan.yaml")
				if err := os.WriteFile(plan, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			o := run(t, tc.client, tc.agent, "--faults", plan)
			if !strings.Contains(o.proxyErr, "CHANGING TRAFFIC") {
				t.Errorf("acpscope did not say it changes traffic:\n%s", o.proxyErr)
			}
			faults := checkDelivered(t, o)
			for _, a := range tc.actions {
				if faults[a] == 0 {
					t.Errorf("no %s in the capture (faults %v)\n%s", a, faults, o.logs())
				}
			}
			if tc.name == "answer" && faults["answer"] == 0 && !bytes.Contains(o.agentWrote, []byte("request_permission")) {
				t.Errorf("the agent never asked for permission, so nothing was answered\n%s", o.logs())
			}
			if tc.works {
				if o.clientExit != nil {
					t.Errorf("client: %v\n%s", o.clientExit, o.logs())
				}
				tc.client.check(t, o.clientOut)
			}
		})
	}
}

// checkDelivered compares what each side received with what the capture
// says was delivered to it (records without a fault, and those forwarded
// or injected), and returns how many records carry each fault action.
func checkDelivered(t *testing.T, o *outcome) map[string]int {
	t.Helper()
	r, err := capture.Open(o.capture)
	if err != nil {
		t.Fatalf("opening the capture: %v\n%s", err, o.logs())
	}
	defer r.Close()
	var recs []capture.Record
	if err := r.Scan(1, func(rec *capture.Record) bool {
		recs = append(recs, *rec)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	var toAgent, toClient bytes.Buffer
	faults := map[string]int{}
	for _, rec := range recs {
		if rec.Flags&wire.FlagBatchMember != 0 || rec.Kind == wire.KindStderr {
			continue
		}
		if rec.Fault != nil {
			faults[rec.Fault.Action]++
			if rec.Fault.Rule == "" || rec.Fault.By != protocol.ByPlan {
				t.Errorf("record %d: fault %+v names no rule", rec.Seq, rec.Fault)
			}
		}
		if !rec.Fault.Delivered() {
			continue
		}
		body, err := r.Body(rec.Seq)
		if err != nil {
			t.Fatal(err)
		}
		buf := &toClient
		if rec.Dir == wire.DirClient {
			buf = &toAgent
		}
		buf.Write(body)
		if rec.Flags&wire.FlagPartial == 0 {
			buf.WriteByte('\n')
		}
	}
	// After a kill or a close, what was written to a side that then died
	// may never have been read: what it read must be the start of it. So
	// too for a client that failed on its own (the TypeScript SDK gives
	// up on a message over 32 MiB) while more was on its way to it.
	ended := faults["kill"] > 0 || faults["close"] > 0
	same := func(delivered, read []byte, died bool) bool {
		return bytes.Equal(delivered, read) || (ended || died) && bytes.HasPrefix(delivered, read)
	}
	if !same(toAgent.Bytes(), o.agentRead, false) {
		t.Errorf("the agent read %d bytes, the capture delivered %d\n%s", len(o.agentRead), toAgent.Len(), firstDifference(toAgent.Bytes(), o.agentRead))
	}
	if !same(toClient.Bytes(), o.clientRead, o.clientExit != nil) {
		t.Errorf("the client read %d bytes, the capture delivered %d\n%s", len(o.clientRead), toClient.Len(), firstDifference(toClient.Bytes(), o.clientRead))
	}
	return faults
}
