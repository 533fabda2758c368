package cli

import (
	"encoding/json"
	"strings"
	"testing"
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
