package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// demoCapture runs the demo (the built-in client and agent through the
// stdio proxy) into dir and returns the directory.
func demoCapture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if r := runCLI(t, nil, "demo", "--dir", dir, "--no-inspect", "--quiet-agent"); r.code != 0 {
		t.Fatalf("demo: exit %d: %s", r.code, r.stderr)
	}
	return dir
}

// TestStats: per method calls, errors, latency with the samples each
// percentile needs, and bytes each way, as a table and as JSON.
func TestStats(t *testing.T) {
	dir := demoCapture(t)
	table := runCLI(t, nil, "stats", "--dir", dir)
	if table.code != 0 {
		t.Fatalf("stats: exit %d: %s", table.code, table.stderr)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(table.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	// METHOD CALLS ERRORS SAMPLES P50 P95 P99 MAX TO AGENT(2) TO CLIENT(2)
	if p := rows["session/prompt"]; len(p) != 12 || p[1] != "2" || p[3] != "2" || p[4] == "-" || p[5] != "-" || p[6] != "-" || p[7] == "-" {
		t.Errorf("session/prompt row %q: want 2 calls, 2 samples, a p50, no p95 or p99, a max", p)
	}
	if p := rows["initialize"]; len(p) != 12 || p[3] != "1" || p[4] != "-" || p[7] == "-" {
		t.Errorf("initialize row %q: one sample gives a max and no p50", p)
	}
	if p := rows["session/update"]; len(p) != 12 || p[3] != "0" || p[8]+p[9] != "0B" || p[10] == "0" {
		t.Errorf("session/update row %q: notifications from the agent, no latency, bytes to the client only", p)
	}
	if !strings.Contains(table.stdout, "p50 2, p95 20, p99 100") {
		t.Errorf("the table does not state the sample rule:\n%s", table.stdout)
	}

	js := runCLI(t, nil, "stats", "--dir", dir, "--format", "json", "--filter", "method:session/prompt")
	var out struct {
		Records int
		Methods []struct {
			Method                      string
			Requests, Errors, Messages  int
			BytesToAgent, BytesToClient int64
			Latency                     map[string]any
		}
	}
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil || js.code != 0 {
		t.Fatalf("stats --format json: exit %d, %v\n%s%s", js.code, err, js.stdout, js.stderr)
	}
	if len(out.Methods) != 1 || out.Records != 4 {
		t.Fatalf("filtered to session/prompt: %d records, methods %+v; want its 4 messages", out.Records, out.Methods)
	}
	m := out.Methods[0]
	if m.Method != "session/prompt" || m.Requests != 2 || m.Messages != 4 || m.BytesToAgent == 0 || m.BytesToClient == 0 {
		t.Errorf("session/prompt: %+v", m)
	}
	if m.Latency["samples"] != 2.0 || m.Latency["p50Ms"] == nil || m.Latency["p95Ms"] != nil || m.Latency["maxMs"] == nil {
		t.Errorf("session/prompt latency %v: want 2 samples, p50 and max, p95 null", m.Latency)
	}
	if bad := runCLI(t, nil, "stats", "--dir", dir, "--format", "xml"); bad.code != 2 || !strings.Contains(bad.stderr, "use table or json") {
		t.Errorf("stats --format xml: exit %d, %q", bad.code, bad.stderr)
	}
}

// TestStatsMCP: MCP carried over ACP is counted by MCP method, with the
// JSON-RPC errors and failed tool calls its answers held, and the filter
// mcp.method finds the answers as well as the calls.
func TestStatsMCP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true, Meta: capture.Meta{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	lines := []struct {
		stream capture.Stream
		body   string
	}{
		{capture.StreamAgent, `{"jsonrpc":"2.0","id":1,"method":"mcp/connect","params":{"serverId":"tools"}}`},
		{capture.StreamClient, `{"jsonrpc":"2.0","id":1,"result":{"connectionId":"c1"}}`},
		{capture.StreamAgent, `{"jsonrpc":"2.0","id":2,"method":"mcp/message","params":{"connectionId":"c1","method":"tools/call","params":{"name":"grep","arguments":{}}}}`},
		{capture.StreamClient, `{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`},
		{capture.StreamAgent, `{"jsonrpc":"2.0","id":3,"method":"_mcp/message","params":{"connectionId":"c1","method":"tools/call","params":{"name":"ls"}}}`},
		{capture.StreamClient, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no such tool"}}`},
		{capture.StreamAgent, `{"jsonrpc":"2.0","method":"mcp/message","params":{"connectionId":"c1","method":"notifications/cancelled"}}`},
	}
	for i, l := range lines {
		w.Chunk(0, l.stream, int64(i+1), []byte(l.body+"\n"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	table := runCLI(t, nil, "stats", path)
	if table.code != 0 {
		t.Fatalf("stats: exit %d: %s", table.code, table.stderr)
	}
	_, mcpPart, ok := strings.Cut(table.stdout, "MCP over ACP")
	if !ok {
		t.Fatalf("stats prints no MCP section:\n%s", table.stdout)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(mcpPart, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	// MCP METHOD(2) REQUESTS NOTIFICATIONS ERRORS TOOL ERRORS(2)
	for method, want := range map[string][]string{
		"tools/call":              {"tools/call", "2", "-", "1", "1"},
		"mcp/connect":             {"mcp/connect", "1", "-", "-", "-"},
		"notifications/cancelled": {"notifications/cancelled", "-", "1", "-", "-"},
	} {
		if got := rows[method]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("MCP row %s: %q, want %q\n%s", method, got, want, mcpPart)
		}
	}

	js := runCLI(t, nil, "stats", path, "--format", "json")
	var out struct{ MCP []mcpStatsJSON }
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil || js.code != 0 {
		t.Fatalf("stats --format json: exit %d, %v\n%s", js.code, err, js.stderr)
	}
	want := mcpStatsJSON{Method: "tools/call", Requests: 2, Errors: 1, ToolErrors: 1}
	if len(out.MCP) != 3 || out.MCP[2] != want {
		t.Errorf("json mcp %+v, want three methods, tools/call last as %+v", out.MCP, want)
	}

	dump := runCLI(t, nil, "dump", path, "--filter", "mcp.method:tools/call", "--format", "jsonl")
	if n := strings.Count(dump.stdout, "\n"); dump.code != 0 || n != 4 {
		t.Errorf("dump --filter mcp.method:tools/call: exit %d, %d records, want both calls and both answers\n%s%s", dump.code, n, dump.stdout, dump.stderr)
	}
}

// TestStatsFaults checks that stats sets apart what acpscope altered, by
// rule or doer and action, in the table and in JSON, and that fault:
// narrows stats to it.
func TestStatsFaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faults.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true, Meta: capture.Meta{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	plan := func(id uint64, rule, action, stage string) *protocol.Fault {
		return &protocol.Fault{ID: id, Rule: rule, Action: action, Stage: stage, By: protocol.ByPlan}
	}
	w.Chunk(0, capture.StreamClient, 1, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`+"\n"))
	w.Altered(0, wire.DirAgent, 2, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`), nil, plan(1, "slow-agent", protocol.ActionDelay, protocol.StageForwarded))
	w.Altered(0, wire.DirAgent, 3, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`), nil, plan(2, "slow-agent", protocol.ActionDelay, protocol.StageForwarded))
	w.Altered(0, wire.DirAgent, 4, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil, plan(3, "lose-answer", protocol.ActionDrop, protocol.StageDropped))
	w.Altered(0, wire.DirClient, 5, []byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`), nil,
		&protocol.Fault{ID: 4, Action: protocol.ActionSend, Stage: protocol.StageInjected, By: protocol.BySend})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	table := runCLI(t, nil, "stats", path)
	if table.code != 0 {
		t.Fatalf("stats: exit %d: %s", table.code, table.stderr)
	}
	_, part, ok := strings.Cut(table.stdout, "Altered by acpscope")
	if !ok {
		t.Fatalf("stats says nothing of the alterations:\n%s", table.stdout)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(part, "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			rows[f[0]+" "+f[1]] = strings.Join(f[2:], " ")
		}
	}
	for key, want := range map[string]string{
		"slow-agent delay": "- - 2 -",
		"lose-answer drop": "1 - - -",
		"send send":        "- - - 1",
	} {
		if rows[key] != want {
			t.Errorf("row %q: %q, want %q\n%s", key, rows[key], want, part)
		}
	}

	js := runCLI(t, nil, "stats", path, "--format", "json", "--filter", "fault:drop")
	var out struct {
		Records int
		Faults  []faultStatsJSON
	}
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil || js.code != 0 {
		t.Fatalf("stats --format json: exit %d, %v\n%s", js.code, err, js.stderr)
	}
	want := faultStatsJSON{Who: "lose-answer", Action: "drop", Dropped: 1}
	if out.Records != 1 || len(out.Faults) != 1 || out.Faults[0] != want {
		t.Errorf("fault:drop: %d records, faults %+v, want 1 and %+v", out.Records, out.Faults, want)
	}

	plain := runCLI(t, nil, "stats", path, "--filter", "not fault:*")
	if strings.Contains(plain.stdout, "Altered by acpscope") {
		t.Errorf("stats of untouched messages lists alterations:\n%s", plain.stdout)
	}
}
