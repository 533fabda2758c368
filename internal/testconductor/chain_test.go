package main

// End-to-end: a client of the test's own drives a proxy chain made of
// this conductor, a proxy component recorded by acpscope's stdio proxy,
// and the test agent; and the test agent's MCP-over-ACP through the stdio
// proxy alone. The captures are then read the way a user reads them.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// bins are the programs the tests run, built once in TestMain.
var bins struct{ acpscope, agent, conductor string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acpscope-chain-test")
	if err != nil {
		panic(err)
	}
	pkgs := []string{"github.com/acpscope/acpscope", "github.com/acpscope/acpscope/internal/testagent", "github.com/acpscope/acpscope/internal/testconductor"}
	if out, err := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...).CombinedOutput(); err != nil {
		panic("building the test programs: " + err.Error() + "\n" + string(out))
	}
	bins.acpscope, bins.agent, bins.conductor = filepath.Join(dir, "acpscope"), filepath.Join(dir, "testagent"), filepath.Join(dir, "testconductor")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitLimit bounds every wait: the machines are shared and busy.
const waitLimit = 2 * time.Minute

// client is the test's ACP client on a subprocess's stdio.
type client struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	msgs  chan message
	next  int
	serve func(m message) any // answers the agent's requests
	seen  []message           // notifications, in order
}

func startClient(t *testing.T, serve func(message) any, argv ...string) *client {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cmd: cmd, in: in, msgs: make(chan message, 256), serve: serve}
	go func() { // client reader: ends with the process's output
		defer close(c.msgs)
		readMessages(out, func(m message) { c.msgs <- m })
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return c
}

func (c *client) send(m message) {
	c.t.Helper()
	m.JSONRPC = "2.0"
	b, _ := json.Marshal(m)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("writing to the agent side: %v", err)
	}
}

// call sends a request and returns its answer's result, answering the
// other side's requests and keeping its notifications meanwhile.
func (c *client) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.next++
	id := json.RawMessage(fmt.Sprint(c.next))
	p, _ := json.Marshal(params)
	c.send(message{ID: id, Method: method, Params: p})
	deadline := time.After(waitLimit)
	for {
		select {
		case m, ok := <-c.msgs:
			switch {
			case !ok:
				c.t.Fatalf("the agent side closed before answering %s", method)
			case m.isRequest():
				res, _ := json.Marshal(c.serve(m))
				c.send(message{ID: m.ID, Result: res})
			case m.isNotification():
				c.seen = append(c.seen, m)
			case string(m.ID) == string(id):
				if m.Error != nil {
					c.t.Fatalf("%s failed: %s", method, m.Error)
				}
				return m.Result
			}
		case <-deadline:
			c.t.Fatalf("no answer to %s after %s", method, waitLimit)
		}
	}
}

// finish closes the client's side and waits for the process to exit 0.
func (c *client) finish() {
	c.t.Helper()
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }() // waiter: ends when the process does
	select {
	case err := <-done:
		if err != nil {
			c.t.Fatalf("%s: %v", c.cmd.Path, err)
		}
	case <-time.After(waitLimit):
		c.t.Fatalf("%s did not exit after its input closed", c.cmd.Path)
	}
}

// converse holds one conversation: initialize, session/new with the
// given MCP servers, one prompt; it returns the agent's text.
func converse(t *testing.T, c *client, servers []any) string {
	t.Helper()
	var init struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	json.Unmarshal(c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}), &init)
	if init.ProtocolVersion != 1 {
		t.Fatalf("initialize answered protocol v%d", init.ProtocolVersion)
	}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": servers}), &sess)
	var done struct {
		StopReason string `json:"stopReason"`
	}
	json.Unmarshal(c.call("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]string{"type": "text", "text": "hello"}}}), &done)
	if done.StopReason != "end_turn" {
		t.Fatalf("the turn ended with %q", done.StopReason)
	}
	var text strings.Builder
	for _, n := range c.seen {
		var p struct {
			Update struct {
				SessionUpdate string
				Content       struct{ Text string }
			}
		}
		json.Unmarshal(n.Params, &p)
		if p.Update.SessionUpdate == "agent_message_chunk" {
			text.WriteString(p.Update.Content.Text)
		}
	}
	return text.String()
}

// readCapture returns a capture's records with their bytes as messages.
func readCapture(t *testing.T, path string) []capture.Record {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []capture.Record
	err = r.Scan(1, func(rec *capture.Record) bool {
		recs = append(recs, *rec)
		return true
	})
	for i := range recs {
		if recs[i].Body, err = r.Body(recs[i].Seq); err != nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func msgsOf(recs []capture.Record) []protocol.Msg {
	out := make([]protocol.Msg, len(recs))
	for i := range recs {
		out[i] = recs[i].Msg
	}
	return out
}

// acpscope runs the acpscope binary and returns its stdout.
func acpscope(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	cmd := exec.Command(bins.acpscope, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != wantCode {
		t.Fatalf("acpscope %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, wantCode, out, stderr.String())
	}
	return string(out)
}

// TestChainThroughConductor records the wire between the conductor and a
// proxy component: the proxy's own conversation with its predecessor, and
// the one it holds with its successor through wrappers, including the
// agent's MCP-over-ACP calls to the MCP server the proxy offers.
func TestChainThroughConductor(t *testing.T) {
	for _, single := range []bool{false, true} {
		t.Run(fmt.Sprintf("single=%v", single), func(t *testing.T) { chainRun(t, single) })
	}
}

func chainRun(t *testing.T, single bool) {
	dir := t.TempDir()
	capPath, tracePath := filepath.Join(dir, "link.acpscope"), filepath.Join(dir, "trace.jsons")
	flags := ""
	if single {
		flags = " --single"
	}
	proxy := bins.acpscope + " --capture " + capPath + " --quiet -- " + bins.conductor + " proxy --mcp-server" + flags
	argv := []string{bins.conductor, "chain", "--trace", tracePath}
	if single {
		argv = append(argv, "--single")
	}
	c := startClient(t, func(m message) any { t.Errorf("unexpected request to the client: %s", m.Method); return nil },
		append(argv, proxy, bins.agent+" acp-mcp")...)
	text := converse(t, c, []any{})
	c.finish()
	if want := "echo: proxy echo: " + proxyContext + "hello"; text != want {
		t.Errorf("the agent said %q, want %q", text, want)
	}

	recs := readCapture(t, capPath)
	wrapper := "_proxy/successor/request"
	if single {
		wrapper = "_proxy/successor"
	}
	var hops [3]int
	for _, r := range recs {
		if r.Kind.IsProtocol() {
			hops[r.Hop]++
		}
		if r.Kind.IsResponse() && r.Peer == 0 {
			t.Errorf("record %d is an unpaired answer: %s", r.Seq, r.Body)
		}
	}
	if hops[0] == 0 || hops[1] == 0 || hops[2] != 0 {
		t.Errorf("records per hop %v, want both the proxy's conversations", hops)
	}
	if r := recs[0]; r.Method != "_proxy/initialize" || r.Dir != wire.DirClient || r.Hop != 0 {
		t.Errorf("first record %s %s hop %d, want the conductor's _proxy/initialize", r.Dir, r.Method, r.Hop)
	}
	if r := recs[1]; r.Method != "initialize" || r.Dir != wire.DirAgent || r.Hop != 1 || !strings.Contains(string(r.Body), wrapper) {
		t.Errorf("second record %s %s hop %d %s, want the proxy's initialize wrapped for its successor", r.Dir, r.Method, r.Hop, r.Body)
	}

	// What a user sees: dump names the hop and the MCP inside; filters
	// reach the inner messages.
	table := acpscope(t, 0, "dump", capPath)
	for _, want := range []string{"session/prompt ↪ hop 1", "mcp/message tools/call echo ↪ hop 1", "_proxy/initialize"} {
		if !strings.Contains(table, want) {
			t.Errorf("dump lacks %q:\n%s", want, table)
		}
	}
	for _, f := range []struct {
		filter string
		lines  int
	}{
		{"method:session/prompt", 4},
		{"method:session/prompt hop:1", 2},
		{"hop:1 mcp.tool:echo", 2}, // the call and its answer
		{"mcp.method:mcp/connect", 2},
		{"params.prompt.0.text=" + strings.Fields(proxyContext)[0] + "*", 1},
	} {
		out := acpscope(t, 0, "dump", capPath, "--format", "jsonl", "--filter", f.filter)
		if n := strings.Count(out, "\n"); n != f.lines {
			t.Errorf("dump --filter %q: %d records, want %d:\n%s", f.filter, n, f.lines, out)
		}
	}
	show := acpscope(t, 0, "show", capPath, fmt.Sprint(seqOf(t, recs, "mcp/message", wire.KindResponse, "proxy echo")))
	for _, want := range []string{"chain:", "↪ hop 1 (answers a wrapped request)", "mcp:", "tools/call echo", `proxy echo: `} {
		if !strings.Contains(show, want) {
			t.Errorf("show of the tools/call answer lacks %q:\n%s", want, show)
		}
	}
	// The link is conformant: lint finds nothing.
	if out := acpscope(t, 0, "lint", "--no-save", capPath); !strings.Contains(out, "0 errors, 0 warnings, 0 info") {
		t.Errorf("lint of the chain link:\n%s", out)
	}

	// The transcript holds the session once per hop; the successor's
	// prompt carries the proxy's context and its tool call the MCP call.
	tr := protocol.BuildTranscript(msgsOf(recs))
	if len(tr.Sessions) != 2 {
		t.Fatalf("%d sessions in the transcript, want one per hop", len(tr.Sessions))
	}
	for _, s := range tr.Sessions {
		turns := s.PromptTurns()
		if len(turns) != 1 {
			t.Fatalf("session %s hop %d: %d turns", s.ID, s.Hop, len(turns))
		}
		first := turns[0].Prompt[0].Text
		if (s.Hop == 1) != (first == proxyContext) {
			t.Errorf("hop %d prompt starts %q", s.Hop, first)
		}
		if s.Hop == 1 {
			tools := turns[0].ToolCalls()
			if len(tools) != 1 || len(tools[0].MCP) != 1 || tools[0].MCP[0].Tool != "echo" || tools[0].MCP[0].Result == nil {
				t.Errorf("hop 1 tool calls %+v, want tool-1 with its MCP echo call", tools)
			}
		}
	}

	// The conductor's own trace imports: one connection per link.
	imported := filepath.Join(dir, "trace.acpscope")
	acpscope(t, 0, "import", tracePath, "-o", imported)
	trecs := readCapture(t, imported)
	links := map[uint32]bool{}
	for _, r := range trecs {
		links[r.Conn] = true
	}
	if len(links) != 2 {
		t.Errorf("the imported trace has connections %v, want Client↔Proxy(0) and Proxy(0)↔Agent", links)
	}
	if got := protocol.MCPCounts(msgsOf(trecs)); len(got) != 3 || got[2].Method != "tools/call" || got[2].Requests != 1 {
		t.Errorf("MCP in the imported trace: %+v", got)
	}
	if out := acpscope(t, 0, "lint", "--no-save", "--min-severity", "error", imported); !strings.Contains(out, "0 errors") {
		t.Errorf("lint of the imported trace:\n%s", out)
	}
}

// seqOf finds the first record of a method and kind whose bytes hold
// text.
func seqOf(t *testing.T, recs []capture.Record, method string, kind wire.Kind, text string) uint64 {
	t.Helper()
	for _, r := range recs {
		if r.Method == method && r.Kind == kind && strings.Contains(string(r.Body), text) {
			return r.Seq
		}
	}
	t.Fatalf("no %s %s holding %q in the capture", kind, method, text)
	return 0
}

// TestMCPThroughStdioProxy: the test agent's MCP-over-ACP calls to an MCP
// server the client declared, recorded by the stdio proxy, decoded,
// paired, filtered and placed under the tool call that made them.
func TestMCPThroughStdioProxy(t *testing.T) {
	capPath := filepath.Join(t.TempDir(), "mcp.acpscope")
	var served []string
	serve := func(m message) any {
		served = append(served, m.Method)
		var p struct {
			ServerID string `json:"serverId"`
			Method   string `json:"method"`
			Params   struct {
				Arguments map[string]string `json:"arguments"`
			} `json:"params"`
		}
		json.Unmarshal(m.Params, &p)
		switch m.Method {
		case "mcp/connect":
			return map[string]string{"connectionId": "conn-" + p.ServerID}
		case "mcp/message":
			return map[string]any{"content": []any{map[string]string{"type": "text", "text": "client echo: " + p.Params.Arguments["text"]}}}
		}
		return map[string]any{}
	}
	c := startClient(t, serve, bins.acpscope, "--capture", capPath, "--quiet", "--", bins.agent, "acp-mcp")
	text := converse(t, c, []any{map[string]string{"type": "acp", "name": "client-tools", "serverId": "srv-1"}})
	c.finish()
	if text != "echo: client echo: hello" || strings.Join(served, " ") != "mcp/connect mcp/message mcp/disconnect" {
		t.Fatalf("the agent said %q after the client served %v", text, served)
	}
	recs := readCapture(t, capPath)
	msgs := msgsOf(recs)
	counts := protocol.MCPCounts(msgs)
	want := []protocol.MCPCount{{Method: "mcp/connect", Requests: 1}, {Method: "mcp/disconnect", Requests: 1}, {Method: "tools/call", Requests: 1}}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("MCPCounts = %+v, want %+v", counts, want)
	}
	out := acpscope(t, 0, "dump", capPath, "--format", "jsonl", "--filter", "mcp.method:tools/call or mcp.tool:echo")
	if strings.Count(out, "\n") != 2 || !strings.Contains(out, `"method":"mcp/message"`) || !strings.Contains(out, `"kind":"response"`) {
		t.Errorf("dump --filter mcp.*:\n%s", out)
	}
	show := acpscope(t, 0, "show", capPath, fmt.Sprint(seqOf(t, recs, "mcp/message", wire.KindRequest, "tools/call")))
	for _, w := range []string{"mcp:     tools/call echo", "mcp args: {\"text\":\"hello\"}", "paired with", `client echo: hello`} {
		if !strings.Contains(show, w) {
			t.Errorf("show lacks %q:\n%s", w, show)
		}
	}
	if out := acpscope(t, 0, "lint", "--no-save", capPath); !strings.Contains(out, "0 errors, 0 warnings, 0 info") {
		t.Errorf("lint:\n%s", out)
	}
	tools := protocol.BuildTranscript(msgs).Session("sess-1").PromptTurns()[0].ToolCalls()
	if len(tools) != 1 || len(tools[0].MCP) != 1 || string(tools[0].MCP[0].Arguments) != `{"text":"hello"}` {
		t.Errorf("tool calls %+v, want the echo MCP call under tool-1", tools)
	}
}
