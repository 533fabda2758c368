package protocol

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/acpscope/acpscope/wire"
)

// MCP-over-ACP (RFD "MCP-over-ACP: MCP Transport via ACP Channels", in
// the unstable schema): a component that declares an MCP server with
// transport "acp" in session/new gets the agent's MCP traffic back over
// the ACP connection. mcp/connect {serverId} opens an MCP connection and
// answers {connectionId}; mcp/message {connectionId, method, params}
// carries one MCP message, flattened like a proxy-chain wrapper (the
// outer id is its id, the outer answer is its answer); mcp/disconnect
// {connectionId} closes it. The reference SDK's first prototype spelled
// them _mcp/connect, _mcp/message and _mcp/disconnect.

// MCPError is a JSON-RPC error object an MCP answer carried.
type MCPError struct {
	Code    int64
	Message string
}

// MCP is what one MCP-over-ACP message carries.
type MCP struct {
	// ACPMethod is the carrying method: mcp/connect, mcp/message or
	// mcp/disconnect (the prototype's _mcp/… are reported as these).
	ACPMethod string
	// Connection is the connectionId: in params of mcp/message and
	// mcp/disconnect, in the result of mcp/connect.
	Connection string
	// Server is the serverId mcp/connect asks for.
	Server string
	// Method and Params are the inner MCP message of mcp/message; an
	// answer has the method of the request it answers.
	Method string
	Params []byte
	// Tool and Arguments are a tools/call's params.name and arguments.
	Tool      string
	Arguments []byte
	// Result and Error are an answer's; ToolError is a tools/call result
	// that says isError: the tool ran and failed.
	Result    []byte
	Error     *MCPError
	ToolError bool
}

// MCPMethod returns the MCP-over-ACP method a method name stands for
// ("mcp/message" for "_mcp/message"), "" for any other method.
func MCPMethod(method string) string {
	switch method {
	case "mcp/connect", "mcp/message", "mcp/disconnect":
		return method
	case "_mcp/connect", "_mcp/message", "_mcp/disconnect":
		return method[1:]
	}
	return ""
}

// DecodeMCP reads the MCP an mcp/connect, mcp/message or mcp/disconnect
// request or notification carries, inside proxy-chain wrappers too. ok is
// false for any other message.
func DecodeMCP(m *Msg) (MCP, bool) {
	if m.Kind != wire.KindRequest && m.Kind != wire.KindNotification {
		return MCP{}, false
	}
	in := Unwrap(m)
	acp := MCPMethod(in.Method)
	if acp == "" {
		return MCP{}, false
	}
	out := MCP{ACPMethod: acp}
	if !isObject(in.Params) {
		return out, true
	}
	p := in.Params
	out.Connection = wire.StringMember(p, "connectionId")
	switch acp {
	case "mcp/connect":
		out.Server = firstString(p, "serverId", "acpId", "acp_id", "acpUrl")
	case "mcp/message":
		out.Method = wire.StringMember(p, "method")
		out.Params = wire.Value(p, "params")
		if out.Method == "tools/call" && isObject(out.Params) {
			out.Tool = wire.StringMember(out.Params, "name")
			out.Arguments = wire.Value(out.Params, "arguments")
		}
	}
	return out, true
}

// DecodeMCPAnswer reads the answer resp gives to the MCP-over-ACP request
// req: mcp/connect's connectionId, mcp/message's inner result or error.
// ok is false when req is not such a request or resp not an answer.
func DecodeMCPAnswer(req, resp *Msg) (MCP, bool) {
	out, ok := DecodeMCP(req)
	if !ok || req.Kind != wire.KindRequest || !resp.Kind.IsResponse() {
		return MCP{}, false
	}
	b := bytes.TrimSpace(resp.Body)
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return out, true
	}
	if e := wire.Value(b, "error"); isObject(e) {
		out.Error = &MCPError{Message: wire.StringMember(e, "message")}
		var code json.Number
		if decode(wire.Value(e, "code"), &code) {
			out.Error.Code, _ = code.Int64()
		}
		return out, true
	}
	out.Result = wire.Value(b, "result")
	switch {
	case out.ACPMethod == "mcp/connect" && isObject(out.Result):
		out.Connection = wire.StringMember(out.Result, "connectionId")
	case out.Method == "tools/call" && isObject(out.Result):
		out.ToolError = string(wire.Value(out.Result, "isError")) == "true"
	}
	return out, true
}

// firstString returns the first of keys that holds a string in obj.
func firstString(obj []byte, keys ...string) string {
	for _, k := range keys {
		if s := wire.StringMember(obj, k); s != "" {
			return s
		}
	}
	return ""
}

// Summary is one line about the MCP message: what a table or a detail
// pane shows beside the carrying method.
func (c MCP) Summary() string {
	switch c.ACPMethod {
	case "mcp/connect":
		if c.Connection != "" {
			return "connected " + c.Connection
		}
		return "server " + c.Server
	case "mcp/disconnect":
		return "conn " + c.Connection
	}
	s := c.Method
	if c.Tool != "" {
		s += " " + c.Tool
	}
	switch {
	case c.Error != nil:
		s += " → error " + c.Error.Message
	case c.ToolError:
		s += " → tool error"
	}
	return s
}

// MCPCount is how often one MCP method travelled over ACP.
type MCPCount struct {
	Method        string
	Requests      int
	Notifications int
	// Errors counts JSON-RPC errors answering the requests; ToolErrors
	// counts tools/call results that say isError.
	Errors     int
	ToolErrors int
}

// MCPTally counts MCP-over-ACP traffic by MCP method (mcp/connect and
// mcp/disconnect under their own names). Feed it a capture's messages in
// order with their bodies; the zero value is ready to use. It is not
// safe for concurrent use.
type MCPTally struct {
	counts  map[string]*MCPCount
	pending pairs[string]
}

// Add counts m: an MCP-over-ACP request or notification, or the answer to
// a request it saw.
func (t *MCPTally) Add(m *Msg) {
	if t.counts == nil {
		t.counts, t.pending = map[string]*MCPCount{}, pairs[string]{}
	}
	if m.Kind.IsResponse() {
		method, ok := t.pending.of(m.Conn).Response(m.Dir, m.ID)
		if !ok {
			return
		}
		c := t.count(method)
		switch {
		case m.Kind == wire.KindError:
			c.Errors++
		case method == "tools/call":
			if r := wire.Value(bytes.TrimSpace(m.Body), "result"); isObject(r) && json.Valid(r) && string(wire.Value(r, "isError")) == "true" {
				c.ToolErrors++
			}
		}
		return
	}
	mcp, ok := DecodeMCP(m)
	if !ok {
		return
	}
	method := mcp.Method
	if mcp.ACPMethod != "mcp/message" {
		method = mcp.ACPMethod
	}
	if method == "" {
		method = "(none)"
	}
	c := t.count(method)
	if m.Kind == wire.KindRequest {
		c.Requests++
		t.pending.of(m.Conn).Request(m.Dir, m.ID, method)
		return
	}
	c.Notifications++
}

func (t *MCPTally) count(method string) *MCPCount {
	c := t.counts[method]
	if c == nil {
		c = &MCPCount{Method: method}
		t.counts[method] = c
	}
	return c
}

// Counts returns the tally by MCP method, in name order.
func (t *MCPTally) Counts() []MCPCount {
	out := make([]MCPCount, 0, len(t.counts))
	for _, c := range t.counts {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method < out[j].Method })
	return out
}

// MCPCounts tallies the MCP-over-ACP traffic of msgs by MCP method: what
// a statistics view lists.
func MCPCounts(msgs []Msg) []MCPCount {
	var t MCPTally
	for i := range msgs {
		t.Add(&msgs[i])
	}
	return t.Counts()
}
