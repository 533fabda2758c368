package peer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// acpMCP is the acp mode's agent with MCP-over-ACP: it advertises
// mcpCapabilities.acp, and when a session declared an MCP server with
// transport "acp", each prompt becomes a tool call carried out through
// it: mcp/connect, mcp/message with tools/call "echo", mcp/disconnect,
// each a request to the client that it waits for. The tool call's
// updates surround the MCP traffic, as a real agent's do.
func acpMCP(stdin io.Reader, stdout, stderr io.Writer) int {
	a := &mcpAgent{r: bufio.NewReaderSize(stdin, 64<<10), w: stdout, servers: map[string]string{}}
	for {
		m, ok := a.next()
		if !ok {
			return 0
		}
		if err := a.answer(m); err != nil {
			fmt.Fprintf(stderr, "testagent: %v\n", err)
			return 1
		}
	}
}

type mcpAgent struct {
	r        *bufio.Reader
	w        io.Writer
	sessions int
	servers  map[string]string // sessionId → serverId of its acp MCP server
	ids      int
}

// rpcMessage is any JSON-RPC message the agent reads.
type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// next reads the next JSON-RPC message; false at the end of input.
func (a *mcpAgent) next() (rpcMessage, bool) {
	for {
		line, err := a.r.ReadBytes('\n')
		var m rpcMessage
		if len(bytes.TrimSpace(line)) > 0 && json.Unmarshal(line, &m) == nil {
			return m, true
		}
		if err != nil {
			return rpcMessage{}, false
		}
	}
}

func (a *mcpAgent) answer(m rpcMessage) error {
	if m.ID == nil || m.Method == "" {
		return nil
	}
	switch m.Method {
	case "initialize":
		return reply(a.w, m.ID, `{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"mcpCapabilities":{"acp":true}},"authMethods":[]}`)
	case "session/new":
		var p struct {
			MCPServers []struct {
				Type, ServerID string
			} `json:"mcpServers"`
		}
		json.Unmarshal(m.Params, &p)
		a.sessions++
		sid := "sess-" + strconv.Itoa(a.sessions)
		for _, s := range p.MCPServers {
			if s.Type == "acp" {
				a.servers[sid] = s.ServerID
			}
		}
		return reply(a.w, m.ID, `{"sessionId":"`+sid+`"}`)
	case "session/prompt":
		return a.prompt(m)
	}
	_, err := fmt.Fprintf(a.w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", m.ID)
	return err
}

func (a *mcpAgent) prompt(m rpcMessage) error {
	var p struct {
		SessionID string `json:"sessionId"`
		Prompt    []struct {
			Text string `json:"text"`
		} `json:"prompt"`
	}
	json.Unmarshal(m.Params, &p)
	text := ""
	for _, b := range p.Prompt {
		text += b.Text
	}
	server, ok := a.servers[p.SessionID]
	if !ok {
		a.update(p.SessionID, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"no tools"}}`)
		return reply(a.w, m.ID, `{"stopReason":"end_turn"}`)
	}
	args, _ := json.Marshal(map[string]string{"text": text})
	a.update(p.SessionID, `{"sessionUpdate":"tool_call","toolCallId":"tool-1","title":"echo","kind":"other","status":"in_progress","rawInput":`+string(args)+`}`)
	connected, err := a.call("mcp/connect", `{"serverId":`+quoteJSON(server)+`}`)
	if err != nil {
		return err
	}
	var c struct {
		ConnectionID string `json:"connectionId"`
	}
	json.Unmarshal(connected, &c)
	conn := quoteJSON(c.ConnectionID)
	result, err := a.call("mcp/message", `{"connectionId":`+conn+`,"method":"tools/call","params":{"name":"echo","arguments":`+string(args)+`}}`)
	if err != nil {
		return err
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	json.Unmarshal(result, &r)
	echoed := ""
	for _, b := range r.Content {
		echoed += b.Text
	}
	a.update(p.SessionID, `{"sessionUpdate":"tool_call_update","toolCallId":"tool-1","status":"completed","content":[{"type":"content","content":{"type":"text","text":`+quoteJSON(echoed)+`}}]}`)
	if _, err := a.call("mcp/disconnect", `{"connectionId":`+conn+`}`); err != nil {
		return err
	}
	a.update(p.SessionID, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+quoteJSON("echo: "+echoed)+`}}`)
	return reply(a.w, m.ID, `{"stopReason":"end_turn"}`)
}

// call sends a request to the client and waits for its answer's result.
func (a *mcpAgent) call(method, params string) (json.RawMessage, error) {
	a.ids++
	id := quoteJSON("agent-" + strconv.Itoa(a.ids))
	if _, err := fmt.Fprintf(a.w, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		return nil, err
	}
	for {
		m, ok := a.next()
		if !ok {
			return nil, fmt.Errorf("input ended while waiting for the answer to %s", method)
		}
		if m.Method == "" && string(m.ID) == id {
			return m.Result, nil
		}
	}
}

func (a *mcpAgent) update(session, upd string) {
	fmt.Fprintf(a.w, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%s,"update":%s}}`+"\n", quoteJSON(session), upd)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
