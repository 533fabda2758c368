package protocol

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

func TestDecodeMCP(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":5,"method":"mcp/message","params":{"connectionId":"c1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}}`
	tests := []struct {
		name                            string
		body                            string
		ok                              bool
		acp, conn, server, method, tool string
		args                            string
	}{
		{"connect", `{"jsonrpc":"2.0","id":1,"method":"mcp/connect","params":{"serverId":"srv"}}`, true, "mcp/connect", "", "srv", "", "", ""},
		{"connect, RFD's acpUrl", `{"jsonrpc":"2.0","id":1,"method":"mcp/connect","params":{"acpUrl":"acp:550e8400"}}`, true, "mcp/connect", "", "acp:550e8400", "", "", ""},
		{"tools/call", call, true, "mcp/message", "c1", "", "tools/call", "echo", `{"text":"hi"}`},
		{"notification", `{"jsonrpc":"2.0","method":"mcp/message","params":{"connectionId":"c1","method":"notifications/initialized"}}`, true, "mcp/message", "c1", "", "notifications/initialized", "", ""},
		{"disconnect", `{"jsonrpc":"2.0","id":9,"method":"mcp/disconnect","params":{"connectionId":"c1"}}`, true, "mcp/disconnect", "c1", "", "", "", ""},
		{"prototype spelling", `{"jsonrpc":"2.0","id":5,"method":"_mcp/message","params":{"connectionId":"c2","method":"tools/list"}}`, true, "mcp/message", "c2", "", "tools/list", "", ""},
		{"inside a proxy chain", wrapIn(t, "_proxy/successor/request", call), true, "mcp/message", "c1", "", "tools/call", "echo", `{"text":"hi"}`},
		{"two hops deep", wrapIn(t, "_proxy/successor", wrapIn(t, "_proxy/successor/request", call)), true, "mcp/message", "c1", "", "tools/call", "echo", `{"text":"hi"}`},
		{"params not an object", `{"jsonrpc":"2.0","id":5,"method":"mcp/message","params":[1]}`, true, "mcp/message", "", "", "", "", ""},
		{"not MCP", `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{}}`, false, "", "", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := FromLine(1, wire.DirAgent, []byte(tt.body))
			c, ok := DecodeMCP(&m)
			if ok != tt.ok || c.ACPMethod != tt.acp || c.Connection != tt.conn || c.Server != tt.server || c.Method != tt.method || c.Tool != tt.tool || string(c.Arguments) != tt.args {
				t.Errorf("DecodeMCP = %v %+v", ok, c)
			}
		})
	}
}

func TestDecodeMCPAnswer(t *testing.T) {
	call := FromLine(1, wire.DirAgent, []byte(`{"jsonrpc":"2.0","id":5,"method":"mcp/message","params":{"connectionId":"c1","method":"tools/call","params":{"name":"echo","arguments":{}}}}`))
	connect := FromLine(1, wire.DirAgent, []byte(`{"jsonrpc":"2.0","id":1,"method":"mcp/connect","params":{"serverId":"srv"}}`))
	tests := []struct {
		name      string
		req       Msg
		resp      string
		result    string
		errMsg    string
		code      int64
		toolError bool
		conn      string
	}{
		{"result", call, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}]}}`, `{"content":[{"type":"text","text":"hi"}]}`, "", 0, false, "c1"},
		{"tool error", call, `{"jsonrpc":"2.0","id":5,"result":{"content":[],"isError":true}}`, `{"content":[],"isError":true}`, "", 0, true, "c1"},
		{"error", call, `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"unknown tool"}}`, "", "unknown tool", -32602, false, "c1"},
		{"connected", connect, `{"jsonrpc":"2.0","id":1,"result":{"connectionId":"c7"}}`, `{"connectionId":"c7"}`, "", 0, false, "c7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := FromLine(2, wire.DirClient, []byte(tt.resp))
			c, ok := DecodeMCPAnswer(&tt.req, &resp)
			if !ok || string(c.Result) != tt.result || c.ToolError != tt.toolError || c.Connection != tt.conn {
				t.Errorf("DecodeMCPAnswer = %v %+v", ok, c)
			}
			if tt.errMsg != "" && (c.Error == nil || c.Error.Message != tt.errMsg || c.Error.Code != tt.code) {
				t.Errorf("error = %+v, want %d %q", c.Error, tt.code, tt.errMsg)
			}
		})
	}
}

// mcpConversation is an agent's tool call carried out through an
// MCP-over-ACP server the client declared.
func mcpConversation(t testing.TB, wrapped bool) []Msg {
	lines := []struct {
		dir  wire.Dir
		body string
	}{
		{wire.DirClient, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}}}}`},
		{wire.DirClient, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"tools","serverId":"srv-1"}]}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`},
		{wire.DirClient, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"echo hi"}]}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"tools/echo","status":"in_progress","rawInput":{"text": "hi"}}}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":10,"method":"mcp/connect","params":{"serverId":"srv-1"}}`},
		{wire.DirClient, `{"jsonrpc":"2.0","id":10,"result":{"connectionId":"c1"}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":11,"method":"mcp/message","params":{"connectionId":"c1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}}`},
		{wire.DirClient, `{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"hi"}]}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":12,"method":"mcp/message","params":{"connectionId":"c1","method":"tools/call","params":{"name":"boom","arguments":{}}}}`},
		{wire.DirClient, `{"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"unknown tool boom"}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":13,"method":"mcp/disconnect","params":{"connectionId":"c1"}}`},
		{wire.DirClient, `{"jsonrpc":"2.0","id":13,"result":{}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`},
	}
	// Wrapped, the agent's MCP requests reach the proxy from its
	// successor through the conductor, and the proxy answers them.
	var msgs []Msg
	for i, l := range lines {
		body, dir := l.body, l.dir
		id := string(wire.Classify([]byte(body)).ID)
		mcpID := len(id) == 2 && id[0] == '1' // ids 10–13: the MCP requests and their answers
		if wrapped && strings.Contains(body, `"method":"mcp/`) {
			body = wrapIn(t, "_proxy/successor/request", body)
		}
		if wrapped && mcpID {
			dir = dir.Reverse()
		}
		msgs = append(msgs, FromLine(uint64(i+1), dir, []byte(body)))
	}
	return msgs
}

func TestMCPCounts(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		got := MCPCounts(mcpConversation(t, wrapped))
		want := []MCPCount{
			{Method: "mcp/connect", Requests: 1},
			{Method: "mcp/disconnect", Requests: 1},
			{Method: "tools/call", Requests: 2, Errors: 1},
		}
		if len(got) != len(want) {
			t.Fatalf("wrapped %v: counts %+v", wrapped, got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("wrapped %v: %+v, want %+v", wrapped, got[i], want[i])
			}
		}
	}
}

// TestTranscriptMCPUnderToolCall: the tools/call an agent makes through
// an MCP-over-ACP server lands under the tool call that caused it, with
// its answer; a capture of the same traffic lints clean.
func TestTranscriptMCPUnderToolCall(t *testing.T) {
	msgs := mcpConversation(t, false)
	if found := Lint(msgs, LintOptions{Finished: true}); len(found) > 0 {
		t.Errorf("MCP-over-ACP traffic has findings:\n%s", dump(found))
	}
	tr := BuildTranscript(msgs)
	s := tr.Session("s1")
	if s == nil || len(s.PromptTurns()) != 1 {
		t.Fatalf("no prompt turn: %+v", tr.Sessions)
	}
	tools := s.PromptTurns()[0].ToolCalls()
	if len(tools) != 1 || len(tools[0].MCP) != 2 {
		t.Fatalf("tool calls %+v, want t1 with two MCP calls", tools)
	}
	echo, boom := tools[0].MCP[0], tools[0].MCP[1]
	if echo.Tool != "echo" || string(echo.Result) != `{"content":[{"type":"text","text":"hi"}]}` || len(echo.Seqs) != 2 {
		t.Errorf("echo call %+v", echo)
	}
	if boom.Tool != "boom" || boom.Error != "unknown tool boom" {
		t.Errorf("boom call %+v", boom)
	}
	if _, _, it := tr.Locate(10); it == nil || it.Tool == nil {
		t.Errorf("the answer to tools/call does not locate its tool call")
	}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, tr, RenderOptions{}); err != nil || !strings.Contains(md.String(), `- MCP (seq 9, 10) tools/call echo {"text":"hi"} → {"content"`) {
		t.Errorf("rendered (%v):\n%s", err, md.String())
	}
}

// TestTranscriptMCPStandalone: with no open tool call the link is not
// knowable, and the call stands on its own in the session.
func TestTranscriptMCPStandalone(t *testing.T) {
	var msgs []Msg
	for _, m := range mcpConversation(t, false) {
		if v, _ := UpdateOf(&m); v == "tool_call" {
			continue
		}
		msgs = append(msgs, m)
	}
	tr := BuildTranscript(msgs)
	var items []*Item
	for _, it := range tr.Session("s1").PromptTurns()[0].Items {
		if it.Kind == ItemMCP {
			items = append(items, it)
		}
	}
	if len(items) != 2 || items[0].MCP.Tool != "echo" {
		t.Fatalf("standalone MCP items %+v", items)
	}
}

// FuzzDecodeMCP: MCP-over-ACP decoding of any message, and of any answer
// to it, never panics, and what it returns comes from the bytes.
func FuzzDecodeMCP(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":5,"method":"mcp/message","params":{"connectionId":"c1","method":"tools/call","params":{"name":"echo","arguments":{"a":[1]}}}}`),
		[]byte(`{"jsonrpc":"2.0","id":5,"result":{"isError":true}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"_proxy/successor","params":{"method":"mcp/connect","params":{"serverId":"s"}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":7}}`))
	f.Fuzz(func(t *testing.T, req, resp []byte) {
		m := FromLine(1, wire.DirAgent, req)
		c, ok := DecodeMCP(&m)
		if !ok {
			return
		}
		for _, b := range [][]byte{c.Params, c.Arguments} {
			if b != nil && !bytes.Contains(req, b) {
				t.Fatalf("%q is not from the request", b)
			}
		}
		r := FromLine(2, wire.DirClient, resp)
		a, _ := DecodeMCPAnswer(&m, &r)
		if a.Result != nil && !bytes.Contains(resp, a.Result) {
			t.Fatalf("result %q is not from the answer", a.Result)
		}
		_ = a.Summary()
		MCPCounts([]Msg{m, r})
	})
}
