package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MCP-over-ACP in the transcript: the MCP servers a session declares with
// transport "acp" (by serverId), the connections mcp/connect opens to them
// and the tools/call requests mcp/message carries. A tools/call is shown
// under the tool call that caused it when the link is knowable: the
// session's open tool call whose rawInput equals the call's arguments or
// whose title names the tool, or its only open tool call; otherwise it
// stands on its own in the session's current turn.

// MCPCall is one MCP tools/call made over ACP, with its answer.
type MCPCall struct {
	Seqs       []uint64
	Connection string
	Method     string // the MCP method: tools/call
	Tool       string
	Arguments  json.RawMessage
	// Result is the answer's result, Error its error message; ToolError
	// marks a result that says isError.
	Result    json.RawMessage
	Error     string
	ToolError bool
}

// mcpState remembers, per hop, which session a server and a connection
// belong to.
type mcpState struct {
	servers map[mcpKey]*Session
	conns   map[mcpKey]*Session
}

type mcpKey struct {
	hop uint8
	id  string
}

// acpServers returns the serverIds of the MCP servers with transport
// "acp" that session-opening params declare.
func acpServers(p map[string]any) []string {
	var ids []string
	for _, s := range arr(p, "mcpServers") {
		sm, _ := s.(map[string]any)
		if str(sm, "type") == "acp" {
			if id := str(sm, "serverId"); id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// declareServers binds the servers a session-opening request declared to
// the session, once it is known.
func (b *builder) declareServers(hop uint8, s *Session, ids []string) {
	if s == nil {
		return
	}
	for _, id := range ids {
		b.mcp.servers[mcpKey{hop, id}] = s
	}
}

// mcpRequest handles an MCP-over-ACP request: it remembers mcp/connect's
// server, and places a tools/call.
func (b *builder) mcpRequest(u unit, req *pendingReq) {
	c, ok := DecodeMCP(&u.Msg)
	if !ok {
		return
	}
	switch {
	case c.ACPMethod == "mcp/connect":
		req.mcpSession = b.mcp.servers[mcpKey{u.Hop, c.Server}]
	case c.Method == "tools/call":
		call := &MCPCall{Seqs: []uint64{u.Seq}, Connection: c.Connection, Method: c.Method, Tool: c.Tool, Arguments: json.RawMessage(c.Arguments)}
		req.mcpCall = call
		req.item = b.placeMCP(u.Hop, call)
	}
}

// mcpAnswer completes an MCP-over-ACP request with its answer.
func (b *builder) mcpAnswer(req pendingReq, u unit) {
	c, ok := DecodeMCPAnswer(&req.u.Msg, &u.Msg)
	if !ok {
		return
	}
	if c.ACPMethod == "mcp/connect" && c.Connection != "" && req.mcpSession != nil {
		b.mcp.conns[mcpKey{req.u.Hop, c.Connection}] = req.mcpSession
	}
	call := req.mcpCall
	if call == nil {
		return
	}
	call.Seqs = append(call.Seqs, u.Seq)
	if req.item != nil {
		req.item.Seqs = append(req.item.Seqs, u.Seq)
	}
	call.Result, call.ToolError = json.RawMessage(c.Result), c.ToolError
	if c.Error != nil {
		call.Error = c.Error.Message
		if call.Error == "" {
			call.Error = "error"
		}
	}
}

// placeMCP puts a tools/call in its session: under the tool call that
// caused it when that is knowable, else as an item of its own. It returns
// the item that holds it (nil when its session is unknown).
func (b *builder) placeMCP(hop uint8, call *MCPCall) *Item {
	s := b.mcp.conns[mcpKey{hop, call.Connection}]
	if s == nil {
		s = b.onlySession(hop)
	}
	if s == nil {
		return nil
	}
	if it := causingTool(s.current(), call); it != nil {
		it.Tool.MCP = append(it.Tool.MCP, call)
		it.Seqs = append(it.Seqs, call.Seqs...)
		return it
	}
	return s.add(&Item{Kind: ItemMCP, Seqs: append([]uint64(nil), call.Seqs...), MCP: call})
}

// onlySession returns the one session of a hop, nil when there are none
// or several: a connection opened before acpscope saw it still belongs
// somewhere when there is nowhere else.
func (b *builder) onlySession(hop uint8) *Session {
	var found *Session
	for k, s := range b.byID {
		if k.hop != hop {
			continue
		}
		if found != nil {
			return nil
		}
		found = s
	}
	return found
}

// causingTool finds the open tool call of a turn that caused call.
func causingTool(t *Turn, call *MCPCall) *Item {
	var open []*Item
	for i := len(t.Items) - 1; i >= 0; i-- {
		it := t.Items[i]
		if it.Kind != ItemTool {
			continue
		}
		switch it.Tool.Status {
		case "completed", "failed":
			continue
		}
		if sameJSON(it.Tool.RawInput, call.Arguments) || call.Tool != "" && strings.Contains(it.Tool.Title, call.Tool) {
			return it
		}
		open = append(open, it)
	}
	if len(open) == 1 {
		return open[0]
	}
	return nil
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	var va, vb any
	if !decode(x.Bytes(), &va) || !decode(y.Bytes(), &vb) {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

// Summary is one line about the call: its tool, arguments and answer,
// the JSON parts cut to max runes each.
func (c *MCPCall) Summary(max int) string {
	return mcpLine(c, func(s string) string {
		if r := []rune(s); len(r) > max {
			return string(r[:max]) + "…"
		}
		return s
	})
}

// mcpLine is one line about an MCP call: the tool, its arguments and
// what it answered, each cut to max runes.
func mcpLine(c *MCPCall, cut func(string) string) string {
	s := c.Method
	if c.Tool != "" {
		s += " " + c.Tool
	}
	if len(c.Arguments) > 0 {
		s += " " + cut(string(c.Arguments))
	}
	switch {
	case c.Error != "":
		return s + " → error: " + c.Error
	case c.Result == nil:
		return s + " → unanswered"
	case c.ToolError:
		return s + " → tool error " + cut(string(c.Result))
	}
	return s + " → " + cut(string(c.Result))
}
