package capture

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// conductorTrace is a trace as the reference conductor writes it with
// --trace (md/trace-viewer.md): one event per line, the logical flow of a
// chain Client → Proxy(0) → Agent, successor wrappers already unwrapped,
// an MCP tools/call the agent made to the proxy's MCP-over-ACP server
// logged with protocol "mcp", ids unique across the chain.
func conductorTrace(t *testing.T) []byte {
	events := []map[string]any{
		{"type": "request", "ts": 0.001, "protocol": "acp", "from": "Client", "to": "Proxy(0)", "id": "c-1", "method": "_proxy/initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}},
		{"type": "request", "ts": 0.002, "protocol": "acp", "from": "Proxy(0)", "to": "Agent", "id": "c-2", "method": "initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}},
		{"type": "response", "ts": 0.003, "from": "Agent", "to": "Proxy(0)", "id": "c-2", "is_error": false, "payload": map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"mcpCapabilities": map[string]any{"acp": true}}}},
		{"type": "response", "ts": 0.004, "from": "Proxy(0)", "to": "Client", "id": "c-1", "is_error": false, "payload": map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"mcpCapabilities": map[string]any{"acp": true}}}},
		{"type": "request", "ts": 0.010, "protocol": "acp", "from": "Client", "to": "Proxy(0)", "id": "c-3", "method": "session/new", "params": map[string]any{"cwd": "/w", "mcpServers": []any{}}},
		{"type": "request", "ts": 0.011, "protocol": "acp", "from": "Proxy(0)", "to": "Agent", "id": "c-4", "method": "session/new", "params": map[string]any{"cwd": "/w", "mcpServers": []any{map[string]any{"type": "acp", "name": "tools", "serverId": "srv"}}}},
		{"type": "response", "ts": 0.012, "from": "Agent", "to": "Proxy(0)", "id": "c-4", "is_error": false, "payload": map[string]any{"sessionId": "s1"}},
		{"type": "response", "ts": 0.013, "from": "Proxy(0)", "to": "Client", "id": "c-3", "is_error": false, "payload": map[string]any{"sessionId": "s1"}},
		{"type": "request", "ts": 0.020, "protocol": "acp", "from": "Client", "to": "Proxy(0)", "id": "c-5", "method": "session/prompt", "session": "s1", "params": map[string]any{"sessionId": "s1", "prompt": []any{}}},
		{"type": "request", "ts": 0.021, "protocol": "acp", "from": "Proxy(0)", "to": "Agent", "id": "c-6", "method": "session/prompt", "session": "s1", "params": map[string]any{"sessionId": "s1", "prompt": []any{}}},
		{"type": "request", "ts": 0.022, "protocol": "mcp", "from": "Agent", "to": "Proxy(0)", "id": "c-7", "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}},
		{"type": "response", "ts": 0.023, "from": "Proxy(0)", "to": "Agent", "id": "c-7", "is_error": false, "payload": map[string]any{"content": []any{}}},
		{"type": "notification", "ts": 0.024, "protocol": "acp", "from": "Agent", "to": "Proxy(0)", "method": "session/update", "params": map[string]any{"sessionId": "s1", "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "hi"}}}},
		{"type": "notification", "ts": 0.025, "protocol": "acp", "from": "Proxy(0)", "to": "Client", "method": "session/update", "params": map[string]any{"sessionId": "s1", "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "hi"}}}},
		{"type": "response", "ts": 0.026, "from": "Agent", "to": "Proxy(0)", "id": "c-6", "is_error": false, "payload": map[string]any{"stopReason": "end_turn"}},
		{"type": "response", "ts": 0.027, "from": "Proxy(0)", "to": "Client", "id": "c-5", "is_error": true, "payload": map[string]any{"code": -32603, "message": "proxy failed"}},
	}
	var b strings.Builder
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func importFile(t *testing.T, name string, data []byte) (ImportResult, *Reader) {
	t.Helper()
	src := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := tempCapture(t)
	res, err := Import(src, dst)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return res, openTest(t, dst)
}

func TestImportConductorTrace(t *testing.T) {
	res, r := importFile(t, "trace.jsons", conductorTrace(t))
	if res.Format != FormatConductorTrace || res.Records != 16 {
		t.Fatalf("Import = %+v", res)
	}
	recs := readAll(t, r)
	conns := map[uint32]int{}
	for _, rec := range recs {
		conns[rec.Conn]++
		if rec.Kind.IsResponse() && rec.Peer == 0 {
			t.Errorf("record %d (%s) is not paired", rec.Seq, rec.Body)
		}
	}
	if len(conns) != 2 || conns[0] != 7 || conns[1] != 9 {
		t.Errorf("records per connection %v, want Client↔Proxy(0) 7 and Proxy(0)↔Agent 9", conns)
	}
	if got := r.Meta().Notes["connections"]; got != "conn 0: Client ↔ Proxy(0); conn 1: Proxy(0) ↔ Agent" {
		t.Errorf("connections note %q", got)
	}
	// The agent's MCP call goes back toward the client, inside the
	// mcp/message the conductor took it out of.
	mcpRec := recs[10]
	if mcpRec.Dir != wire.DirAgent || mcpRec.Method != "mcp/message" {
		t.Fatalf("record 11: %s %s", mcpRec.Dir, mcpRec.Body)
	}
	c, ok := protocol.DecodeMCP(&mcpRec.Msg)
	if !ok || c.Method != "tools/call" || c.Tool != "echo" || string(c.Arguments) != `{"text":"hi"}` {
		t.Errorf("DecodeMCP = %v %+v", ok, c)
	}
	if last := recs[15]; last.Kind != wire.KindError || last.ErrorCode != -32603 || last.Method != "session/prompt" {
		t.Errorf("the error answer: %s %d %q", last.Kind, last.ErrorCode, last.Method)
	}
	if d := recs[15].Time - recs[0].Time; d != 26_000_000 {
		t.Errorf("the trace spans %d ns, want 26 ms", d)
	}
	// Each link lints as the conversation it was.
	var msgs []protocol.Msg
	for _, rec := range recs {
		msgs = append(msgs, rec.Msg)
	}
	for _, f := range protocol.Lint(msgs, protocol.LintOptions{Finished: true}) {
		if f.Severity == protocol.Error {
			t.Errorf("lint: %s %s", f.Rule, f.Message)
		}
	}
}

// inspectorTraceFile is an acp-inspector export as docs/trace-export.md
// pins it: a header, then frames verbatim, on two connections, one frame
// base64 as its bridge may write.
func inspectorTraceFile(t *testing.T, dropped int) []byte {
	frames := []struct {
		conn      any
		dir, body string
		b64       bool
	}{
		{1, "client -> agent", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, false},
		{1, "agent -> client", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}`, false},
		{1, "agent -> client", "not json\nat all", false},
		{"ws-7", "client -> agent", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, true},
	}
	var b strings.Builder
	header, _ := json.Marshal(map[string]any{"type": "header", "format": "acp-inspector-trace", "version": 1, "at": 1785312000123, "frames": len(frames), "dropped": dropped,
		"warning": "ACP frames may contain prompts, file contents, and tool output; nothing is redacted"})
	b.Write(header)
	b.WriteByte('\n')
	for i, f := range frames {
		rec := map[string]any{"type": "frame", "at": 1785312000456 + i, "connection": f.conn, "direction": f.dir, "encoding": "utf8", "frame": f.body}
		if f.b64 {
			rec["encoding"], rec["frame"] = "base64", base64.StdEncoding.EncodeToString([]byte(f.body))
		}
		line, _ := json.Marshal(rec)
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func TestImportInspectorTrace(t *testing.T) {
	res, r := importFile(t, "acp-trace-1785312000123.jsonl", inspectorTraceFile(t, 3))
	if res.Format != FormatInspectorTrace || res.Records != 4 {
		t.Fatalf("Import = %+v", res)
	}
	recs := readAll(t, r)
	want := []struct {
		conn uint32
		dir  wire.Dir
		kind wire.Kind
		body string
	}{
		{0, wire.DirClient, wire.KindRequest, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`},
		{0, wire.DirAgent, wire.KindResponse, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}`},
		{0, wire.DirAgent, wire.KindNonProtocol, "not json\nat all"},
		{1, wire.DirClient, wire.KindRequest, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`},
	}
	for i, w := range want {
		got := recs[i]
		if got.Conn != w.conn || got.Dir != w.dir || got.Kind != w.kind || string(got.Body) != w.body {
			t.Errorf("record %d: conn %d %s %s %q, want %+v", got.Seq, got.Conn, got.Dir, got.Kind, got.Body, w)
		}
	}
	if recs[1].Peer != 1 || recs[3].Peer != 0 {
		t.Errorf("peers %d %d: an id pairs only on its own connection", recs[1].Peer, recs[3].Peer)
	}
	m := r.Meta()
	if !strings.Contains(m.Notes["dropped"], "dropped 3 frames") || m.Start.UnixMilli() != 1785312000456 {
		t.Errorf("meta %+v", m)
	}
}

func TestImportTraceErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"inspector version 2", `{"type":"header","format":"acp-inspector-trace","version":2,"at":1,"frames":0,"dropped":0}` + "\n", "reads version 1"},
		{"inspector direction", `{"type":"header","format":"acp-inspector-trace","version":1}` + "\n" + `{"type":"frame","at":1,"connection":1,"direction":"up","encoding":"utf8","frame":"{}"}`, `direction "up"`},
		{"inspector encoding", `{"type":"header","format":"acp-inspector-trace","version":1}` + "\n" + `{"type":"frame","at":1,"connection":1,"direction":"client -> agent","encoding":"hex","frame":"00"}`, `encoding "hex"`},
		{"conductor event type", `{"type":"request","ts":0,"from":"Client","to":"Agent","id":1,"method":"x"}` + "\n" + `{"type":"log","ts":1,"from":"Client","to":"Agent"}`, `line 2: event type "log"`},
		{"conductor without ts", `{"type":"request","from":"Client","to":"Agent","id":1,"method":"x"}`, "line 1: an event needs from, to and ts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "in.jsonl")
			os.WriteFile(src, []byte(tt.data), 0o600)
			dst := filepath.Join(t.TempDir(), "out.acpscope")
			_, err := Import(src, dst)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Import error %v, want one saying %q", err, tt.want)
			}
			if _, err := os.Stat(dst); err == nil {
				t.Errorf("a failed import left %s", dst)
			}
		})
	}
}

// FuzzImportTrace: any bytes parse as either trace without panicking,
// and every body rebuilt from a conductor event is one JSON object.
func FuzzImportTrace(f *testing.F) {
	f.Add(conductorTraceSeed())
	f.Add([]byte(`{"type":"header","format":"acp-inspector-trace","version":1}` + "\n" + `{"type":"frame","at":1,"connection":"x","direction":"agent -> client","encoding":"base64","frame":"e30="}`))
	f.Add([]byte(`{"type":"response","ts":1e308,"from":"Proxy(99999999999)","to":"Proxy(-1)","id":null,"is_error":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, _, _, err := parseConductorTrace(data)
		if err == nil {
			for _, l := range lines {
				if !json.Valid(l.body) || l.body[0] != '{' {
					t.Fatalf("rebuilt body %q is not a JSON object", l.body)
				}
			}
		}
		meta := Meta{Notes: map[string]string{}}
		_, _ = parseInspectorTrace(data, &meta)
		_ = traceFormat(firstLine(data))
	})
}

func conductorTraceSeed() []byte {
	return []byte(`{"type":"request","ts":0.5,"protocol":"mcp","from":"Agent","to":"Proxy(0)","id":"x","method":"tools/call","params":{"name":"a"}}` + "\n" +
		`{"type":"notification","ts":0.6,"protocol":"acp","from":"Client","to":"Agent","method":"session/cancel","params":null}`)
}
