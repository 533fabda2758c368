package protocol

import "github.com/acpscope/acpscope/wire"

// The proxy-chain rules (RFD "Agent Extensions via ACP Proxies"). The
// inner messages of wrappers are judged by every other rule at their own
// hop (Msg.From, linter.at); these judge the chain itself: the wrappers'
// shape, who may forward, and the capabilities the RFD requires.

// chainState is what one connection has shown of its chain.
type chainState struct {
	// terminal is set once the component was initialized with plain
	// initialize: it is the final agent, with no successor.
	terminal    uint64
	terminalHit bool // chain/terminal-successor reported
	spelling    bool // chain/rfd-spelling reported
}

// chainMessage checks a request or notification for the chain rules.
func (l *linter) chainMessage(u unit) {
	outer := u.cls.Method
	if u.Hop == 0 && u.From() == wire.DirClient && u.Kind == wire.KindRequest {
		switch {
		case u.Method == "initialize":
			l.chain.terminal = u.Seq
		case IsProxyInitialize(u.Method):
			l.chain.terminal = 0
		}
	}
	if outer == "proxy/successor" || u.Method == "proxy/initialize" || outer == "proxy/initialize" {
		l.rfdSpelling(u)
	}
	if !IsSuccessor(outer) {
		return
	}
	seq := []uint64{u.Seq}
	if u.Hop == 0 {
		l.report("chain/wrapper-shape", seq, "%s carries no message: its params must be an object with a string method (and the inner params)", outer)
		return
	}
	switch {
	case outer == "_proxy/successor/request" && u.Kind != wire.KindRequest:
		l.report("chain/wrapper-kind", seq, "%s was sent without an id: a wrapped notification travels in _proxy/successor/notification", outer)
	case outer == "_proxy/successor/notification" && u.Kind != wire.KindNotification:
		l.report("chain/wrapper-kind", seq, "%s was sent with an id: a wrapped request travels in _proxy/successor/request", outer)
	}
	if l.chain.terminal != 0 && !l.chain.terminalHit {
		l.chain.terminalHit = true
		l.report("chain/terminal-successor", []uint64{l.chain.terminal, u.Seq},
			"the component was initialized with initialize (seq %d), as the final agent with no successor, yet %s travels to or from a successor; proxies get _proxy/initialize", l.chain.terminal, outer)
	}
	if IsProxyInitialize(u.Method) && u.From() == wire.DirClient {
		l.report("chain/forwarded-initialize", seq, "a proxy forwarded %s to its successor: it forwards initialize, and the conductor sends _proxy/initialize or initialize as the successor is a proxy or the agent", u.Method)
	}
}

// rfdSpelling notes, once per connection, the RFD text's method names
// without the underscore: the reference conductor speaks the extension
// form, and a peer that treats unknown methods by the extension rule
// answers these with -32601.
func (l *linter) rfdSpelling(u unit) {
	if l.chain.spelling {
		return
	}
	l.chain.spelling = true
	l.report("chain/rfd-spelling", []uint64{u.Seq}, "proxy/successor and proxy/initialize are the RFD text's names; the reference conductor sends _proxy/successor and _proxy/initialize")
}

// chainInitAnswer checks an answer to initialize for what the RFD asks of
// a chain: a proxy answers _proxy/initialize with MCP-over-ACP enabled,
// and the conductor, answering a proxy's forwarded initialize, always
// advertises it too.
func (l *linter) chainInitAnswer(req, u unit, res map[string]any) {
	if u.Kind != wire.KindResponse {
		return
	}
	acp := mcpACP(obj(obj(res, "agentCapabilities"), "mcpCapabilities"))
	switch {
	case IsProxyInitialize(req.Method) && req.Hop == 0 && !acp:
		l.report("chain/proxy-mcp-acp", []uint64{req.Seq, u.Seq}, "the proxy answered %s without agentCapabilities.mcpCapabilities.acp: proxies must enable MCP-over-ACP", req.Method)
	case req.Method == "initialize" && req.Hop > 0 && req.From() == wire.DirClient && !acp:
		l.report("chain/conductor-mcp-acp", []uint64{req.Seq, u.Seq}, "the answer to a proxy's forwarded initialize lacks agentCapabilities.mcpCapabilities.acp: the conductor advertises it to proxies whatever the agent supports, bridging for it")
	}
}

// mcpACP reports whether mcpCapabilities enables the ACP transport: true
// in v1, an object (possibly empty) in the v2 draft.
func mcpACP(caps map[string]any) bool {
	switch v := caps["acp"].(type) {
	case bool:
		return v
	case map[string]any:
		return true
	}
	return false
}
