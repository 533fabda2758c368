package main

import (
	"encoding/json"
	"flag"
	"io"
	"strconv"
	"strings"
)

// proxyComponent is a proxy in a chain: its one channel is to the
// conductor. What arrives plain comes from its predecessor and goes on,
// wrapped, to its successor; what arrives wrapped comes from its successor
// and goes back plain. It answers each side's requests with its own ids
// and remembers whose answer is whose. It runs on one goroutine.
type proxyComponent struct {
	out     *lineWriter
	single  bool
	mcp     bool
	next    int
	pending map[string]reply
	conns   int
}

// reply is the request an answer of ours is owed to.
type reply struct {
	id  json.RawMessage
	acp bool // the answer to _proxy/initialize: enable MCP-over-ACP
}

// The MCP server the proxy offers with --mcp-server.
const (
	proxyServerID   = "proxy-srv"
	proxyServerName = "proxy-tools"
	proxyContext    = "[context from the proxy] "
)

func runProxy(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	single := fs.Bool("single", false, "wrap in _proxy/successor rather than …/request and …/notification")
	mcp := fs.Bool("mcp-server", false, "offer an MCP server over ACP in every session/new")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p := &proxyComponent{out: &lineWriter{w: stdout}, single: *single, mcp: *mcp, pending: map[string]reply{}}
	readMessages(stdin, p.handle)
	return nil
}

func (p *proxyComponent) handle(m message) {
	if m.Method == "" {
		r, ok := p.pending[string(m.ID)]
		if !ok {
			return
		}
		delete(p.pending, string(m.ID))
		out := message{ID: r.id, Result: m.Result, Error: m.Error}
		if r.acp && m.Result != nil {
			out.Result = withACP(m.Result) // proxies MUST enable MCP-over-ACP (RFD)
		}
		p.out.send(out)
		return
	}
	if inner, ok := unwrap(m); ok {
		if !p.serveMCP(inner) {
			p.forward(inner, reply{id: inner.ID}, false) // back to the predecessor
		}
		return
	}
	r := reply{id: m.ID}
	switch m.Method {
	case "_proxy/initialize":
		m.Method, r.acp = "initialize", true
	case "session/new":
		if p.mcp {
			m.Params = addServer(m.Params)
		}
	case "session/prompt":
		m.Params = addContext(m.Params)
	}
	p.forward(m, r, true)
}

// forward sends m on with an id of the proxy's own; toSuccessor wraps it.
func (p *proxyComponent) forward(m message, r reply, toSuccessor bool) {
	if m.isRequest() {
		p.next++
		m.ID = json.RawMessage(strconv.Quote("p-" + strconv.Itoa(p.next)))
		p.pending[string(m.ID)] = r
	}
	if toSuccessor {
		m = wrap(m, p.single)
	}
	p.out.send(m)
}

// serveMCP answers the agent's MCP-over-ACP requests to the proxy's own
// server: the answer is a plain response to the wrapper's id.
func (p *proxyComponent) serveMCP(m message) bool {
	if !p.mcp || !strings.HasPrefix(m.Method, "mcp/") {
		return false
	}
	var params struct {
		ServerID     string `json:"serverId"`
		ConnectionID string `json:"connectionId"`
		Method       string `json:"method"`
		Params       struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"params"`
	}
	json.Unmarshal(m.Params, &params)
	var result any
	switch {
	case m.Method == "mcp/connect" && params.ServerID == proxyServerID:
		p.conns++
		result = map[string]string{"connectionId": "proxy-conn-" + strconv.Itoa(p.conns)}
	case m.Method == "mcp/message" && strings.HasPrefix(params.ConnectionID, "proxy-conn-") && params.Method == "tools/call" && params.Params.Name == "echo":
		result = map[string]any{"content": []any{map[string]string{"type": "text", "text": "proxy echo: " + params.Params.Arguments["text"]}}}
	case m.Method == "mcp/disconnect" && strings.HasPrefix(params.ConnectionID, "proxy-conn-"):
		result = map[string]any{}
	default:
		return false
	}
	if m.ID != nil {
		b, _ := json.Marshal(result)
		p.out.send(message{ID: m.ID, Result: b})
	}
	return true
}

// addServer declares the proxy's MCP server in session/new's params.
func addServer(params json.RawMessage) json.RawMessage {
	var p map[string]any
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params
	}
	servers, _ := p["mcpServers"].([]any)
	p["mcpServers"] = append(servers, map[string]string{"type": "acp", "name": proxyServerName, "serverId": proxyServerID})
	b, _ := json.Marshal(p)
	return b
}

// addContext puts a line of the proxy's context before the prompt.
func addContext(params json.RawMessage) json.RawMessage {
	var p map[string]any
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params
	}
	prompt, _ := p["prompt"].([]any)
	p["prompt"] = append([]any{map[string]string{"type": "text", "text": proxyContext}}, prompt...)
	b, _ := json.Marshal(p)
	return b
}
