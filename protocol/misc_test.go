package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSeverityText(t *testing.T) {
	for _, s := range []Severity{Info, Warning, Error} {
		got, err := ParseSeverity(s.String())
		if err != nil || got != s {
			t.Errorf("ParseSeverity(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseSeverity("loud"); err == nil {
		t.Error("ParseSeverity accepted loud")
	}
	b, err := json.Marshal(Finding{Rule: "x/y", Severity: Warning})
	if err != nil || !strings.Contains(string(b), `"severity":"warning"`) {
		t.Errorf("finding JSON %s %v", b, err)
	}
	var f Finding
	if err := json.Unmarshal(b, &f); err != nil || f.Severity != Warning {
		t.Errorf("round trip %+v %v", f, err)
	}
}

func TestBlockSummary(t *testing.T) {
	tests := []struct {
		block Block
		want  string
	}{
		{Block{Type: "text", Text: "hi"}, "hi"},
		{Block{Type: "audio", MimeType: "audio/wav", Size: 8}, "[audio audio/wav, 8 bytes base64]"},
		{Block{Type: "resource_link", Name: "a.go", URI: "file:///a.go"}, "[link a.go file:///a.go]"},
		{Block{Type: "resource", URI: "file:///a", Text: "abc"}, "[resource file:///a, 3 chars]"},
		{Block{Type: "resource", URI: "file:///b", Size: 12}, "[resource file:///b, 12 bytes blob]"},
		{Block{Type: "hologram"}, "[hologram]"},
	}
	for _, tt := range tests {
		if got := tt.block.Summary(); got != tt.want {
			t.Errorf("Summary() = %q, want %q", got, tt.want)
		}
	}
}

func TestCatalogTables(t *testing.T) {
	if len(Methods()) != len(methods) || len(UpdateVariants()) != len(updateVariants) {
		t.Fatal("copies differ from the tables")
	}
	for _, m := range Methods() {
		if m.Sender == 0 || m.Stability == Unknown || m.Summary == "" || m.Sender.String() == "unknown" || m.Stability.String() == "unknown" {
			t.Errorf("incomplete catalog entry %+v", m)
		}
	}
}

// TestHTTPPermissionAnswer: the client's answer to a session-scoped agent
// request is a session-scoped POST and needs Acp-Session-Id.
func TestHTTPPermissionAnswer(t *testing.T) {
	capture := `{"dir":"client","msg":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}},"http":{"method":"POST","path":"/acp","stream":"post","headers":{"content-type":"application/json"}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}},"http":{"method":"POST","path":"/acp","status":200,"stream":"post-reply","connectionId":"c1"}}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}},"http":{"method":"GET","path":"/acp","stream":"sse-session","connectionId":"c1","sessionId":"s1"}}
{"dir":"client","msg":{"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"cancelled"}}},"http":{"method":"POST","path":"/acp","stream":"post","connectionId":"c1","headers":{"content-type":"application/json"}}}
{"dir":"agent","http":{"method":"POST","path":"/acp","status":202,"stream":"http","connectionId":"c1"}}
`
	_, found := lintString(t, capture)
	if got := withRule(found, "http/missing-session-id"); len(got) != 1 || got[0].Seqs[0] != 4 {
		t.Errorf("permission answer without Acp-Session-Id: %s", dump(got))
	}
}

func lintString(t *testing.T, jsonl string) ([]Msg, []Finding) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(path, []byte(jsonl), 0o600); err != nil {
		t.Fatal(err)
	}
	msgs, opts := loadJSONL(t, path)
	return msgs, Lint(msgs, opts)
}

// TestLintSessionLoad: updates during session/load are expected, but the
// client must wait for the answer; a failed load establishes nothing.
func TestLintSessionLoad(t *testing.T) {
	const head = `{"dir":"client","msg":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}}
{"dir":"client","msg":{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"old","cwd":"/","mcpServers":[]}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"old","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}}}}
`
	_, got := lintString(t, head+`{"dir":"client","msg":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"old","prompt":[]}}}
`)
	if f := withRule(got, "acp/session-not-ready"); len(f) != 1 || f[0].Seqs[0] != 5 {
		t.Errorf("prompt during load: %s", dump(got))
	}
	_, got = lintString(t, head+`{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}}
{"dir":"client","msg":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"old","prompt":[]}}}
`)
	if f := withRule(got, "acp/unknown-session"); len(f) != 1 || f[0].Seqs[0] != 6 {
		t.Errorf("prompt after a failed load: %s", dump(got))
	}
	_, got = lintString(t, head+`{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{}}}
{"dir":"client","msg":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"old","prompt":[]}}}
`)
	if len(got) != 0 {
		t.Errorf("clean load: %s", dump(got))
	}
}
