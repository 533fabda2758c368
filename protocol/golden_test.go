package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Golden captures: a conformant v1 conversation, a conformant v2-draft
// one and a conformant proxy-chain link, written by this test (go test
// ./protocol -run TestGoldenCaptures -update) in the lint test format, and
// the transcripts they rebuild to. Each must lint without a finding.

// conv writes a conversation in the lint test format.
type conv struct{ lines [][]byte }

func (c *conv) add(dir string, msg map[string]any) {
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(map[string]any{"dir": dir, "msg": msg})
	if err != nil {
		panic(err)
	}
	c.lines = append(c.lines, b)
}

// call adds a request and its answer; from is the requester.
func (c *conv) call(from string, id any, method string, params, result any) {
	c.add(from, map[string]any{"id": id, "method": method, "params": params})
	c.add(other(from), map[string]any{"id": id, "result": result})
}

func (c *conv) note(from, method string, params any) {
	c.add(from, map[string]any{"method": method, "params": params})
}

func (c *conv) update(session string, upd map[string]any) {
	c.note("agent", "session/update", map[string]any{"sessionId": session, "update": upd})
}

func (c *conv) bytes() []byte {
	return append(append([]byte(`{"options":{"finished":true}}`+"\n"), bytes.Join(c.lines, []byte("\n"))...), '\n')
}

func other(dir string) string {
	if dir == "client" {
		return "agent"
	}
	return "client"
}

type jobj = map[string]any

func text(s string) jobj { return jobj{"type": "text", "text": s} }

func goldenV1() []byte {
	var c conv
	c.call("client", 0, "initialize", jobj{"protocolVersion": 1, "clientCapabilities": jobj{"fs": jobj{"readTextFile": true, "writeTextFile": true}, "terminal": true},
		"clientInfo": jobj{"name": "golden-client", "version": "1.0"}},
		jobj{"protocolVersion": 1, "agentCapabilities": jobj{"loadSession": true, "promptCapabilities": jobj{"image": true, "audio": false, "embeddedContext": true},
			"mcpCapabilities": jobj{"http": false, "sse": false}}, "authMethods": []any{jobj{"id": "key", "name": "API key"}}, "agentInfo": jobj{"name": "golden-agent", "version": "1.0"}})
	c.call("client", 1, "authenticate", jobj{"methodId": "key"}, jobj{})
	c.call("client", 2, "session/new", jobj{"cwd": "/work", "mcpServers": []any{}},
		jobj{"sessionId": "sess-1", "modes": jobj{"currentModeId": "ask", "availableModes": []any{jobj{"id": "ask", "name": "Ask"}, jobj{"id": "code", "name": "Code"}}}})
	c.call("client", 3, "session/set_mode", jobj{"sessionId": "sess-1", "modeId": "code"}, jobj{})
	c.update("sess-1", jobj{"sessionUpdate": "current_mode_update", "currentModeId": "code"})
	c.add("client", jobj{"id": 4, "method": "session/prompt", "params": jobj{"sessionId": "sess-1", "prompt": []any{text("Fix the failing test."),
		jobj{"type": "resource", "resource": jobj{"uri": "file:///work/a_test.go", "text": "package a", "mimeType": "text/x-go"}}}}})
	c.update("sess-1", jobj{"sessionUpdate": "agent_thought_chunk", "content": text("Reading the test first.")})
	c.update("sess-1", jobj{"sessionUpdate": "plan", "entries": []any{jobj{"content": "Read a_test.go", "priority": "high", "status": "in_progress"},
		jobj{"content": "Fix a.go", "priority": "medium", "status": "pending"}}})
	c.update("sess-1", jobj{"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Read a_test.go", "kind": "read", "status": "pending",
		"locations": []any{jobj{"path": "/work/a_test.go"}}})
	c.call("agent", 0, "fs/read_text_file", jobj{"sessionId": "sess-1", "path": "/work/a_test.go"}, jobj{"content": "package a\n"})
	c.update("sess-1", jobj{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed"})
	c.update("sess-1", jobj{"sessionUpdate": "tool_call", "toolCallId": "call-2", "title": "Edit a.go", "kind": "edit", "status": "pending"})
	c.call("agent", 1, "session/request_permission", jobj{"sessionId": "sess-1", "toolCall": jobj{"toolCallId": "call-2"},
		"options": []any{jobj{"optionId": "allow", "name": "Allow", "kind": "allow_once"}, jobj{"optionId": "reject", "name": "Reject", "kind": "reject_once"}}},
		jobj{"outcome": jobj{"outcome": "selected", "optionId": "allow"}})
	c.call("agent", 2, "fs/write_text_file", jobj{"sessionId": "sess-1", "path": "/work/a.go", "content": "package a\n\nfunc A() int { return 1 }\n"}, nil)
	c.update("sess-1", jobj{"sessionUpdate": "tool_call_update", "toolCallId": "call-2", "status": "completed",
		"content": []any{jobj{"type": "diff", "path": "/work/a.go", "oldText": "package a\n", "newText": "package a\n\nfunc A() int { return 1 }\n"}}})
	c.call("agent", 3, "terminal/create", jobj{"sessionId": "sess-1", "command": "go", "args": []any{"test", "./..."}}, jobj{"terminalId": "term-1"})
	c.call("agent", 4, "terminal/wait_for_exit", jobj{"sessionId": "sess-1", "terminalId": "term-1"}, jobj{"exitCode": 0})
	c.call("agent", 5, "terminal/output", jobj{"sessionId": "sess-1", "terminalId": "term-1"}, jobj{"output": "ok\n", "truncated": false})
	c.call("agent", 6, "terminal/release", jobj{"sessionId": "sess-1", "terminalId": "term-1"}, jobj{})
	c.update("sess-1", jobj{"sessionUpdate": "agent_message_chunk", "content": text("Fixed: ")})
	c.update("sess-1", jobj{"sessionUpdate": "agent_message_chunk", "content": text("the test passes.")})
	c.add("agent", jobj{"id": 4, "result": jobj{"stopReason": "end_turn"}})
	c.add("client", jobj{"id": 5, "method": "session/prompt", "params": jobj{"sessionId": "sess-1", "prompt": []any{text("Now refactor everything.")}}})
	c.update("sess-1", jobj{"sessionUpdate": "agent_message_chunk", "content": text("Starting…")})
	c.note("client", "session/cancel", jobj{"sessionId": "sess-1"})
	c.add("agent", jobj{"id": 5, "result": jobj{"stopReason": "cancelled"}})
	return c.bytes()
}

func goldenV2() []byte {
	var c conv
	c.call("client", 0, "initialize", jobj{"protocolVersion": 2, "clientCapabilities": jobj{}, "clientInfo": jobj{"name": "golden-client", "version": "2.0"}},
		jobj{"protocolVersion": 2, "agentCapabilities": jobj{"promptCapabilities": jobj{"image": false}}, "authMethods": []any{jobj{"id": "key", "name": "API key"}},
			"agentInfo": jobj{"name": "golden-agent", "version": "2.0"}})
	c.call("client", 1, "auth/login", jobj{"methodId": "key"}, jobj{})
	c.call("client", 2, "session/new", jobj{"cwd": "/work", "mcpServers": []any{}}, jobj{"sessionId": "sess-2"})
	// A v2 prompt is accepted at once; the turn ends with state idle.
	c.call("client", 3, "session/prompt", jobj{"sessionId": "sess-2", "prompt": []any{text("What is in README?")}}, jobj{})
	c.update("sess-2", jobj{"sessionUpdate": "state_update", "state": "running"})
	c.update("sess-2", jobj{"sessionUpdate": "user_message", "messageId": "msg-1", "content": []any{text("What is in README?")}})
	c.update("sess-2", jobj{"sessionUpdate": "agent_thought", "messageId": "msg-2", "content": []any{text("Look it up.")}})
	c.update("sess-2", jobj{"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Look up README", "kind": "_lookup", "status": "pending"})
	c.call("agent", 0, "session/request_permission", jobj{"sessionId": "sess-2", "toolCall": jobj{"toolCallId": "call-1"},
		"options": []any{jobj{"optionId": "yes", "name": "Allow", "kind": "allow_once"}}}, jobj{"outcome": jobj{"outcome": "selected", "optionId": "yes"}})
	c.update("sess-2", jobj{"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed"})
	c.update("sess-2", jobj{"sessionUpdate": "agent_message", "messageId": "msg-3", "content": []any{text("A title and a usage section.")}})
	c.update("sess-2", jobj{"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
	c.call("client", 4, "session/prompt", jobj{"sessionId": "sess-2", "prompt": []any{text("Summarise the code too.")}}, jobj{})
	c.update("sess-2", jobj{"sessionUpdate": "state_update", "state": "running"})
	c.note("client", "session/cancel", jobj{"sessionId": "sess-2"})
	c.update("sess-2", jobj{"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"})
	c.call("client", 5, "auth/logout", jobj{}, jobj{})
	return c.bytes()
}

func TestGoldenCaptures(t *testing.T) {
	chain, err := os.ReadFile(filepath.Join("testdata", "lint", "chain", "wrapper-shape.good.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		name    string
		capture []byte
		version int
	}{{"v1", goldenV1(), 1}, {"v2", goldenV2(), 2}, {"chain", chain, 1}} {
		t.Run(g.name, func(t *testing.T) {
			golden(t, "golden/"+g.name+".jsonl", g.capture)
			path := filepath.Join("testdata", "golden", g.name+".jsonl")
			msgs, opts := loadJSONL(t, path)
			if found := Lint(msgs, opts); len(found) > 0 {
				t.Errorf("a conformant %s capture has findings:\n%s", g.name, dump(found))
			}
			if v := NegotiatedVersion(msgs); v != g.version {
				t.Errorf("NegotiatedVersion = %d, want %d", v, g.version)
			}
			tr := BuildTranscript(msgs)
			for _, s := range tr.Sessions {
				for _, turn := range s.PromptTurns() {
					if turn.EndSeq == 0 || turn.StopReason == "" {
						t.Errorf("session %s turn %d did not end: %+v", s.ID, turn.Index, turn)
					}
				}
			}
			var md bytes.Buffer
			if err := RenderMarkdown(&md, tr, RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			golden(t, "golden/"+g.name+".transcript.md", md.Bytes())
		})
	}
}
