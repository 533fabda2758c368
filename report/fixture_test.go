package report

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// secretKey is a credential planted in the fixture; no report may hold it.
const secretKey = "sk-ant-api03-FAKEFAKEFAKEFAKEFAKEFAKE0123456789"

// session is a whole ACP session as a client and agent say it: the
// handshake with capabilities, a session with modes and configuration
// options, a prompt turn with a plan, thoughts, message chunks, a tool
// call that reads and one that edits (a diff), a permission, an fs call,
// a failed request, stderr, and a secret in mcpServers' env.
var session = []struct {
	s    capture.Stream
	text string
}{
	{capture.StreamClient, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"zed","title":"Zed","version":"0.201.3"}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"embeddedContext":true}},"agentInfo":{"name":"claude-code-acp","version":"0.5.1"},"authMethods":[{"id":"oauth","name":"Log in"}]}}`},
	{capture.StreamStderr, `agent: ready`},
	{capture.StreamClient, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/work","mcpServers":[{"name":"gh","command":"gh-mcp","args":[],"env":[{"name":"ANTHROPIC_API_KEY","value":"` + secretKey + `"}]}]}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-1","modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"plan","name":"Plan mode","description":"read only"}]},"configOptions":[{"id":"model","name":"Model","type":"select","currentValue":"sonnet","options":[{"value":"sonnet","name":"Sonnet"},{"value":"opus","name":"Opus"}]}]}}`},
	{capture.StreamClient, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"Fix the greeting in main.go"}]}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"plan","entries":[{"content":"Read main.go","priority":"high","status":"in_progress"},{"content":"Fix the greeting","priority":"high","status":"pending"}]}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"The user wants "}}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"a new greeting."}}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"I will read "}}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"main.go first."}}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read main.go","kind":"read","status":"pending","locations":[{"path":"/work/main.go"}]}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"sess-1","path":"/work/main.go"}}`},
	{capture.StreamClient, `{"jsonrpc":"2.0","id":0,"result":{"content":"package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Edit main.go","kind":"edit","status":"pending","content":[{"type":"diff","path":"/work/main.go","oldText":"package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n","newText":"package main\n\nfunc main() {\n\tprintln(\"hello, ACP\")\n}\n"}]}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"t2","title":"Edit main.go"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}`},
	{capture.StreamClient, `{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","id":2,"method":"terminal/create","params":{"sessionId":"sess-1","command":"go","args":["test"]}}`},
	{capture.StreamClient, `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"terminal not supported"}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"completed"}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done: main.go now says hello to ACP."}}}}`},
	{capture.StreamAgent, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`},
}

// fixture writes the session, then filler turns until the capture holds
// n records (n 0: the session alone), and a message of big bytes when big
// is positive, into a new capture and returns its path.
func fixture(t testing.TB, n, big int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.acpscope")
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true,
		Meta: capture.Meta{Transport: "stdio", Agent: "claude-code-acp", Argv: []string{"claude-code-acp", "--api-key=" + secretKey},
			ProxyVersion: "test", Start: start, End: start.Add(time.Minute), Pid: 4242, Cwd: "/work"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := start.UnixNano()
	i := 0
	line := func(s capture.Stream, text string) {
		for w.Stats().Queued > 16<<20 {
			time.Sleep(time.Millisecond)
		}
		w.Chunk(0, s, t0+int64(i)*int64(3*time.Millisecond), []byte(text+"\n"))
		i++
	}
	for _, l := range session {
		line(l.s, l.text)
	}
	if big > 0 {
		line(capture.StreamClient, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"and the big one"}]}}`)
		line(capture.StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+strings.Repeat("big ", big/4)+`"}}}}`)
		line(capture.StreamAgent, `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`)
	}
	for id := 100; i < n; id++ {
		line(capture.StreamClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"question %d"}]}}`, id, id))
		for k := 0; k < 20 && i < n-1; k++ {
			line(capture.StreamAgent, fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"word %d "}}}}`, k))
		}
		line(capture.StreamAgent, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, id))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// open opens a capture for the test.
func open(t testing.TB, path string) *capture.Reader {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
