package demo

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit"
)

// TestAgentAnswers feeds the agent raw lines and checks each answer line
// (or that none comes, for notifications).
func TestAgentAnswers(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	tests := []struct {
		name  string
		in    []string
		want  []string // substrings of each answer line, in order
		noOut bool
	}{
		{name: "unknown request", in: []string{`{"jsonrpc":"2.0","id":7,"method":"_acme/unknown","params":{}}`},
			want: []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,`}},
		{name: "string id kept", in: []string{`{"jsonrpc":"2.0","id":"abc","method":"session/fork"}`},
			want: []string{`"id":"abc","error":{"code":-32601`}},
		{name: "unknown notification ignored", in: []string{`{"jsonrpc":"2.0","method":"_acme/ping","params":{}}`}, noOut: true},
		{name: "cancel of unknown session ignored", in: []string{`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}`}, noOut: true},
		{name: "invalid JSON", in: []string{`{"jsonrpc":"2.0",`}, want: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700`}},
		{name: "wrong version", in: []string{`{"jsonrpc":"1.0","id":1,"method":"initialize"}`}, want: []string{`"id":null,"error":{"code":-32600`}},
		{name: "initialize", in: []string{initialize},
			want: []string{`"result":{"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":false,"sse":false},"promptCapabilities":{"audio":false,"embeddedContext":true,"image":true}},"agentInfo":{"name":"acpscope-demo-agent"`}},
		{name: "batch answered one by one", in: []string{`[` + initialize + `,{"jsonrpc":"2.0","id":1,"method":"nope"}]`},
			want: []string{`"id":0,"result":{`, `"id":1,"error":{"code":-32601`}},
		{name: "relative cwd", in: []string{`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"rel","mcpServers":[]}}`},
			want: []string{`"id":1,"error":{"code":-32602,"message":"session/new: cwd \"rel\" must be an absolute path"}`}},
		{name: "missing mcpServers", in: []string{`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}`},
			want: []string{`"id":1,"error":{"code":-32602`}},
		{name: "prompt for unknown session", in: []string{`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"x","prompt":[{"type":"text","text":"hi"}]}}`},
			want: []string{`"id":2,"error":{"code":-32602,"message":"session/prompt: unknown session \"x\""}`}},
		{name: "load of an unseen session replays a canned past", in: []string{`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"old","cwd":"/w","mcpServers":[]}}`},
			want: []string{`"sessionUpdate":"user_message_chunk"`, `"sessionUpdate":"agent_message_chunk"`, `{"jsonrpc":"2.0","id":3,"result":{}}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := runAgentOn(t, strings.Join(tc.in, "\n")+"\n")
			if tc.noOut {
				if len(out) != 0 {
					t.Fatalf("agent answered a notification: %q", out)
				}
				return
			}
			if len(out) != len(tc.want) {
				t.Fatalf("got %d lines, want %d: %q", len(out), len(tc.want), out)
			}
			for i, w := range tc.want {
				if !strings.Contains(out[i], w) {
					t.Errorf("line %d = %s\nwant it to contain %s", i, out[i], w)
				}
			}
		})
	}
}

func runAgentOn(t *testing.T, input string) []string {
	t.Helper()
	var out testkit.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := RunAgent(ctx, strings.NewReader(input), &out, AgentOptions{}); err != nil {
		t.Fatalf("RunAgent: %v", err)
	}
	var lines []string
	for _, l := range out.Lines() {
		if l != "" {
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	return lines
}

func TestAgentRejectsStrayResponse(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":41,"result":{}}` + "\n"
	err := RunAgent(context.Background(), strings.NewReader(in), io.Discard, AgentOptions{})
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("err = %v, want ErrProtocol", err)
	}
}

// TestClientProtocolErrors plays a scripted agent that makes one mistake
// and checks that the client stops with ErrProtocol naming it.
func TestClientProtocolErrors(t *testing.T) {
	initOK := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`
	tests := []struct {
		name    string
		answers []string // written after each client line, in order
		want    string
	}{
		{name: "response to unknown id", answers: []string{`{"jsonrpc":"2.0","id":99,"result":{}}`}, want: "id 99"},
		{name: "invalid JSON", answers: []string{`not json`}, want: "invalid JSON"},
		{name: "wrong protocol version", answers: []string{`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`}, want: "protocolVersion"},
		{name: "update for unknown session", answers: []string{initOK, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ghost","update":{"sessionUpdate":"plan","entries":[]}}}`},
			want: `unknown session "ghost"`},
		{name: "early update for another session", answers: []string{initOK,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ghost","update":{"sessionUpdate":"plan","entries":[]}}}` + "\n" +
				`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`},
			want: `unknown session "ghost"`},
		{name: "session/new without id", answers: []string{initOK, `{"jsonrpc":"2.0","id":1,"result":{}}`}, want: "no sessionId"},
		{name: "bad stop reason", answers: []string{initOK, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"done"}}`}, want: `stopReason "done"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, w := scriptedAgent(t, tc.answers)
			_, err := RunClient(context.Background(), r, w, ClientOptions{Grace: 100 * time.Millisecond})
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrProtocol mentioning %q", err, tc.want)
			}
		})
	}
}

// TestClientAdoptsEarlyUpdates: updates for a new session that arrive
// before session/new's answer (goose does this) belong to that session.
func TestClientAdoptsEarlyUpdates(t *testing.T) {
	r, w := scriptedAgent(t, []string{
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
	})
	sum, err := RunClient(context.Background(), r, w, ClientOptions{Prompts: []string{"hi"}, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	if got := sum.Sessions[0].Between; len(got) != 1 || got[0] != "available_commands_update" {
		t.Errorf("updates before the answer = %q", got)
	}
}

// scriptedAgent plays an agent that writes answers[i] after reading the
// client's i-th line, then stays silent until the test ends. It returns
// the client's reader and writer.
func scriptedAgent(t *testing.T, answers []string) (io.Reader, io.Writer) {
	a2cR, a2cW := io.Pipe()
	c2aR, c2aW := io.Pipe()
	t.Cleanup(func() { _ = a2cW.Close(); _ = c2aR.Close() })
	go func() { // scripted agent; ends with the test
		from := bufio.NewReader(c2aR)
		for _, a := range answers {
			if _, err := from.ReadString('\n'); err != nil {
				return
			}
			if _, err := io.WriteString(a2cW, a+"\n"); err != nil {
				return
			}
		}
		_, _ = io.Copy(io.Discard, from)
	}()
	return a2cR, c2aW
}

// TestClientAnswersUnknownMethod checks the client's answers to the
// agent's own requests, including methods it does not know.
func TestClientAnswersUnknownMethod(t *testing.T) {
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	done := make(chan error, 1)
	go func() { // the client under test
		_, err := RunClient(context.Background(), a2cR, c2aW, ClientOptions{Grace: time.Second})
		done <- err
	}()
	from := bufio.NewReader(c2aR)
	expect := func(sub string) {
		t.Helper()
		line, err := from.ReadString('\n')
		if err != nil || !strings.Contains(line, sub) {
			t.Fatalf("client sent %q (err %v), want it to contain %q", line, err, sub)
		}
	}
	send := func(s string) { _, _ = io.WriteString(a2cW, s+"\n") }
	expect(`"method":"initialize"`)
	send(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`)
	expect(`"method":"session/new"`)
	send(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`)
	expect(`"method":"session/prompt"`)
	send(`{"jsonrpc":"2.0","id":0,"method":"_acme/unknown","params":{}}`)
	expect(`{"jsonrpc":"2.0","id":0,"error":{"code":-32601,`)
	send(`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/nope"}}`)
	expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,`)
	send(`{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"other","path":"/workspace/demo/main.go"}}`)
	expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,`)
	send(`{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/workspace/demo/main.go","line":6,"limit":1}}`)
	expect(`{"jsonrpc":"2.0","id":3,"result":{"content":"\tfmt.Println(\"hello, world\")\n"}}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"terminal/output","params":{"sessionId":"s1","terminalId":"t9"}}`)
	expect(`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,`)
	send(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`)
	expect(`"method":"session/prompt"`)
	send(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`)
	if _, err := from.ReadString('\n'); err != io.EOF {
		t.Fatalf("client did not close its output after the prompts: %v", err)
	}
	_ = a2cW.Close()
	if err := <-done; err != nil {
		t.Fatalf("RunClient: %v", err)
	}
}
