package protocol

import "fmt"

// Severity ranks findings.
type Severity uint8

// The severities, lowest first.
const (
	Info Severity = iota
	Warning
	Error
)

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "unknown"
}

// ParseSeverity is the inverse of String.
func ParseSeverity(s string) (Severity, error) {
	for _, sev := range []Severity{Info, Warning, Error} {
		if sev.String() == s {
			return sev, nil
		}
	}
	return Info, fmt.Errorf("unknown severity %q: use info, warning or error", s)
}

// MarshalText makes severities read as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a severity word.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	*s = v
	return err
}

// Rule describes one lint rule.
type Rule struct {
	ID          string   `json:"id"`
	Severity    Severity `json:"severity"`
	Description string   `json:"description"`
	Ref         string   `json:"ref"`
}

// Finding is one thing lint found wrong, with the messages that show it.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Seqs     []uint64 `json:"seqs"`
	Ref      string   `json:"ref,omitempty"`
}

// Spec sections the rules cite.
const (
	refRequest      = "JSON-RPC 2.0 §4"
	refNotification = "JSON-RPC 2.0 §4.1"
	refResponse     = "JSON-RPC 2.0 §5"
	refErrorObject  = "JSON-RPC 2.0 §5.1"
	refBatch        = "JSON-RPC 2.0 §6; ACP transports (v2 draft) §Batch Messages"
	refStdio        = "ACP transports (stdio)"
	refUTF8         = "ACP transports: messages MUST be UTF-8"
	refInit         = "ACP initialization"
	refVersion      = "ACP initialization §Protocol version"
	refSession      = "ACP session setup"
	refUpdate       = "ACP prompt turn §Agent reports output (session/update)"
	refPrompt       = "ACP prompt turn §Stop reasons"
	refCancel       = "ACP prompt turn §Cancellation"
	refPermission   = "ACP tool calls §Requesting permission"
	refClientCaps   = "ACP initialization §Client capabilities; file system; terminals"
	refPromptCaps   = "ACP initialization §Prompt capabilities; content"
	refCancelReq    = "ACP cancellation ($/cancel_request)"
	refExtensions   = "ACP extensibility; schema"
	refV2           = "ACP v2 draft"
	refDelta        = "Agent Communication Protocol (pre-alpha) §Delta Algorithm"
	refV2Prompt     = "ACP v2 draft RFD \"v2 Prompt Lifecycle\" §state_update"
	refV2Enum       = "ACP v2 draft RFD \"v2 Enum Variant Extension\""
	refChain        = "ACP RFD \"Agent Extensions via ACP Proxies\" §Message reference"
	refChainInit    = "ACP RFD \"Agent Extensions via ACP Proxies\" §Proxy initialization protocol"
	refChainMCP     = "ACP RFD \"Agent Extensions via ACP Proxies\" §MCP-over-ACP support"
	refHTTPNeg      = "ACP RFD streamable HTTP §Content Negotiation and Validation"
	refHTTPRouting  = "ACP RFD streamable HTTP §Unified Endpoint Routing"
	refHTTPFlow     = "ACP RFD streamable HTTP §Message Flow"
	refFaults       = "acpscope fault plans (README §Faults)"
	refWebSocket    = "ACP RFD streamable HTTP §WebSocket Request Flow"
	refHTTP2        = "ACP RFD streamable HTTP §Adds an HTTP Transport (Requires HTTP/2); §Content Negotiation and Validation"
)

var rules = []Rule{
	{"jsonrpc/version", Error, `"jsonrpc" is missing or not exactly "2.0"`, refRequest},
	{"jsonrpc/id-type", Error, "id is not a string, a number or null", refRequest},
	{"jsonrpc/id-fractional", Warning, "numeric id has a fractional part", refRequest},
	{"jsonrpc/request-null-id", Warning, "request with a null id (null ids are for unreadable requests)", refRequest},
	{"jsonrpc/invalid-message", Error, "JSON object that is neither a request, a notification nor a response", refRequest},
	{"jsonrpc/result-and-error", Error, "response carries both result and error", refResponse},
	{"jsonrpc/error-object", Error, "error is not {code: integer, message: string, data?}", refErrorObject},
	{"jsonrpc/response-unknown-id", Error, "response to an id the other side never sent", refResponse},
	{"jsonrpc/response-duplicate", Error, "second response to a request already answered", refResponse},
	{"jsonrpc/duplicate-id", Error, "request reuses the id of one still in flight in the same direction", refRequest},
	{"jsonrpc/reply-to-notification", Error, "response with a null id while nothing unreadable was sent: notifications get no reply", refNotification},
	{"jsonrpc/unreadable-reply-code", Warning, "error answering an unreadable message has the wrong code (-32700 for invalid JSON, -32600 for an invalid request)", refErrorObject},
	{"jsonrpc/unanswered", Warning, "request never answered by the end of a finished capture", refResponse},

	{"stdio/non-json-stdout", Error, "agent wrote a line to stdout that is not a JSON-RPC message", refStdio},
	{"stdio/non-json-stdin", Error, "client wrote a line to the agent's stdin that is not a JSON-RPC message", refStdio},
	{"stdio/empty-line", Warning, "empty line on the protocol stream", refStdio},
	{"stdio/invalid-utf8", Error, "line is not valid UTF-8", refUTF8},
	{"stdio/partial-line", Warning, "stream ended inside a line (no final newline)", refStdio},
	{"stdio/after-exit", Warning, "agent output arrived after the agent process exited", refStdio},
	{"stdio/crlf", Info, `line ends in "\r\n"`, refStdio},

	{"batch/empty", Error, "empty batch array sent (an invalid request)", refBatch},
	{"batch/empty-reply", Error, "empty batch not answered with exactly one -32600 error with id null", refBatch},
	{"batch/empty-array-reply", Error, "batch answered with an empty array", refBatch},
	{"batch/notification-reply", Error, "batch reply contains a response to a notification", refBatch},
	{"batch/all-notifications-reply", Error, "all-notification batch got a reply", refBatch},
	{"batch/invalid-entry", Warning, "batch entry is not a valid request, notification or response", refBatch},
	{"batch/invalid-entry-reply", Error, "invalid batch entries did not each get a -32600 error with id null", refBatch},
	{"batch/reply-not-array", Warning, "requests of a batch answered one by one instead of in one array", refBatch},
	{"batch/missing-response", Warning, "batch reply lacks a response for one of the batch's requests", refBatch},
	{"batch/lifecycle", Warning, "lifecycle method (initialize, authenticate, session/new, session/load, session/prompt) sent in a batch", refBatch},
	{"batch/v1", Info, "batch sent although protocol v1 speaks of individual messages", refStdio},

	{"acp/initialize-first", Error, "the client's first message is not initialize", refInit},
	{"acp/not-initialized", Warning, "request sent before initialize was answered", refInit},
	{"acp/protocol-version", Error, "protocolVersion is missing or not an integer", refVersion},
	{"acp/version-negotiation", Warning, "agent answered a protocol version newer than the client asked for", refVersion},
	{"acp/session-not-ready", Error, "session method used before the session/new, load or resume opening it was answered", refSession},
	{"acp/unknown-session", Error, "sessionId that no session/new, load, resume or fork established", refSession},
	{"acp/update-before-session", Warning, "session/update for a session whose session/new is not answered yet", refSession},
	{"acp/stop-reason", Error, "session/prompt result has a stopReason outside end_turn, max_tokens, max_turn_requests, refusal, cancelled", refPrompt},
	{"acp/cancel-stop-reason", Warning, "prompt cancelled with session/cancel did not end with stopReason cancelled", refCancel},
	{"acp/cancel-permission", Error, "permission request pending at session/cancel not answered with outcome cancelled", refPermission},
	{"acp/permission-outcome", Error, "permission answer is not {outcome:{outcome:selected, optionId:<offered>}} or {outcome:{outcome:cancelled}}", refPermission},
	{"acp/client-capability", Error, "agent called fs/* or terminal/* the client did not advertise", refClientCaps},
	{"acp/prompt-capability", Error, "prompt content type (image, audio, embedded resource) the agent did not advertise", refPromptCaps},
	{"acp/cancel-request-target", Warning, "$/cancel_request for a request that is not in flight", refCancelReq},
	{"acp/unknown-update", Warning, "unknown session/update variant (shown, never dropped)", refUpdate},
	{"acp/update-discriminator", Error, "session/update without update.sessionUpdate", refUpdate},
	{"acp/unknown-method", Warning, "method not in the ACP catalog and not an extension (_…)", refExtensions},
	{"acp/wrong-direction", Error, "method sent by the side that must not send it", refExtensions},
	{"acp/call-shape", Error, "request sent as a notification or notification sent as a request", refExtensions},
	{"acp/version-method", Warning, "method not part of the negotiated protocol version", refV2},
	{"acp/legacy-method", Info, "legacy method (session/set_model is now a config option)", refExtensions},
	{"acp/delta-mismatch", Error, "agents/run progress deltas do not join to the final output", refDelta},
	{"acp/version-update", Warning, "session/update variant of the v2 draft (state_update, user_message, …) under negotiated v1", refV2},
	{"acp/enum-value", Warning, "enum value outside its list: v1 enums are closed; in v2 custom values start with _ and other values are reserved for ACP", refV2Enum},
	{"acp/v2-turn-end", Warning, "v2 prompt accepted but its turn never ended with state_update idle by the end of a finished capture", refV2Prompt},

	{"acpscope/altered", Info, "acpscope altered traffic in this capture (fault plan, hold, send, serve's stream bound); findings judge what each side received and name the alterations behind them", refFaults},

	{"chain/wrapper-shape", Error, "proxy-chain successor wrapper whose params are not {method, params?}", refChain},
	{"chain/wrapper-kind", Error, "_proxy/successor/request sent without an id, or _proxy/successor/notification with one", refChain},
	{"chain/terminal-successor", Error, "component initialized with initialize (the final agent, no successor) but successor messages travel to or from it", refChainInit},
	{"chain/forwarded-initialize", Warning, "proxy forwarded _proxy/initialize to its successor instead of initialize", refChainInit},
	{"chain/proxy-mcp-acp", Error, "proxy answered _proxy/initialize without mcpCapabilities.acp", refChainMCP},
	{"chain/conductor-mcp-acp", Warning, "answer to a proxy's forwarded initialize lacks mcpCapabilities.acp, which the conductor always advertises to proxies", refChainMCP},
	{"chain/rfd-spelling", Info, "proxy/successor or proxy/initialize, the RFD text's names, where the reference conductor speaks _proxy/…", refChain},

	{"http/content-type", Error, "POST Content-Type and 415 do not agree (non-JSON POSTs get 415)", refHTTPNeg},
	{"http/accept", Error, "GET Accept and 406 do not agree (SSE GETs need Accept: text/event-stream)", refHTTPNeg},
	{"http/missing-connection-id", Error, "request without Acp-Connection-Id not answered 400", refHTTPRouting},
	{"http/missing-session-id", Error, "session-scoped POST without Acp-Session-Id not answered 400", refHTTPRouting},
	{"http/unknown-connection", Error, "unknown Acp-Connection-Id not answered 404", refHTTPRouting},
	{"http/batch", Warning, "batch POST not answered 501", refHTTPNeg},
	{"http/post-status", Error, "POST status: initialize gets 200 with a JSON body, everything else 202 with none", refHTTPFlow},
	{"http/connection-id-header", Error, "initialize's 200 or the WebSocket 101 lacks the Acp-Connection-Id header", refHTTPFlow},
	{"http/delete-status", Error, "DELETE with Acp-Connection-Id not answered 202", refHTTPRouting},
	{"http/http2", Error, "Streamable HTTP over HTTP/1.x: the RFD says the transport MUST use HTTP/2 (WebSocket upgrades excepted; reported once per connection)", refHTTP2},

	{"schema/invalid", Error, "message does not validate against the supplied ACP JSON schema", "ACP schema"},
}

var ruleIndex = func() map[string]Rule {
	ix := make(map[string]Rule, len(rules))
	for _, r := range rules {
		ix[r.ID] = r
	}
	return ix
}()

// Rules returns every lint rule, grouped by family.
func Rules() []Rule {
	out := make([]Rule, len(rules))
	copy(out, rules)
	return out
}

// LookupRule returns a rule by id.
func LookupRule(id string) (Rule, bool) {
	r, ok := ruleIndex[id]
	return r, ok
}
