package telemetry

import (
	"strings"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// The acp.* attributes: what ACP carries that no semantic convention
// names. README.md lists them in a table; keep the two in step.
const (
	keySeq         = attribute.Key("acp.seq")          // the record a span starts at: `acpscope show CAPTURE SEQ`
	keyResponseSeq = attribute.Key("acp.response.seq") // the record that ended it
	keyDirection   = attribute.Key("acp.direction")    // client_to_agent or agent_to_client
	keyConnection  = attribute.Key("acp.connection")   // connection number within the capture
	keySession     = attribute.Key("acp.session.id")
	keyUnanswered  = attribute.Key("acp.unanswered") // the capture ended before the response
	keyDuplicateID = attribute.Key("acp.duplicate_id")
	keyReqBody     = attribute.Key("acp.request.body")  // --otlp-bodies only
	keyRespBody    = attribute.Key("acp.response.body") // --otlp-bodies only
	keyBody        = attribute.Key("acp.body")          // an event's message, --otlp-bodies only

	keyStopReason   = attribute.Key("acp.stop_reason")
	keyTotalTokens  = attribute.Key("acp.usage.total_tokens")
	keyThought      = attribute.Key("acp.usage.thought_tokens")
	keyCachedRead   = attribute.Key("acp.usage.cached_read_tokens")
	keyCachedWrite  = attribute.Key("acp.usage.cached_write_tokens")
	keyTTFC         = attribute.Key("acp.time_to_first_chunk_ms")
	keyMsgChunks    = attribute.Key("acp.chunks.message")
	keyThoughtChunk = attribute.Key("acp.chunks.thought")
	keyToolCalls    = attribute.Key("acp.tool_calls")
	keyCancelled    = attribute.Key("acp.cancelled")
	keyPromptBlocks = attribute.Key("acp.prompt.blocks")
	keyCtxUsed      = attribute.Key("acp.context.used")
	keyCtxSize      = attribute.Key("acp.context.size")
	keyCostAmount   = attribute.Key("acp.cost.amount")
	keyCostCurrency = attribute.Key("acp.cost.currency")

	keyToolID         = attribute.Key("acp.tool_call.id")
	keyToolKind       = attribute.Key("acp.tool_call.kind")
	keyToolTitle      = attribute.Key("acp.tool_call.title")
	keyToolStatus     = attribute.Key("acp.tool_call.status")
	keyToolUnfinished = attribute.Key("acp.tool_call.unfinished")

	keyPermOutcome = attribute.Key("acp.permission.outcome")
	keyPermOption  = attribute.Key("acp.permission.option_id")
	keyPermKind    = attribute.Key("acp.permission.option_kind")

	keyFSPath       = attribute.Key("acp.fs.path")
	keyTermCommand  = attribute.Key("acp.terminal.command")
	keyTermID       = attribute.Key("acp.terminal.id")
	keyTermExitCode = attribute.Key("acp.terminal.exit_code")
	keyTermSignal   = attribute.Key("acp.terminal.signal")

	keyProtocol      = attribute.Key("acp.protocol_version")
	keyClientName    = attribute.Key("acp.client.name")
	keyClientVer     = attribute.Key("acp.client.version")
	keyAgentName     = attribute.Key("acp.agent.name")
	keyAgentVer      = attribute.Key("acp.agent.version")
	keyAuthMethod    = attribute.Key("acp.auth.method_id")
	keyMCPServers    = attribute.Key("acp.mcp_servers")
	keyUpdateKind    = attribute.Key("acp.update.kind")
	keyPlanEntries   = attribute.Key("acp.plan.entries")
	keyPlanDone      = attribute.Key("acp.plan.completed")
	keyModeID        = attribute.Key("acp.mode.id")
	keyStderrText    = attribute.Key("acp.stderr.text")
	keyFaultID       = attribute.Key("acp.fault.id")     // the alteration; its records share it
	keyFaultAction   = attribute.Key("acp.fault.action") // drop, delay, rewrite, answer, hold, send…
	keyFaultStage    = attribute.Key("acp.fault.stage")  // dropped, replaced, forwarded, injected
	keyFaultRule     = attribute.Key("acp.fault.rule")   // the fault plan's rule
	keyFaultBy       = attribute.Key("acp.fault.by")     // plan, intercept or send
	keyFrameKind     = attribute.Key("acp.frame.kind")
	keyTransport     = attribute.Key("acp.transport")
	keyCapture       = attribute.Key("acp.capture")
	keyCancelID      = attribute.Key("acp.cancel.request_id")
	keyHTTPStatus    = attribute.Key("http.response.status_code")
	keyMessages      = attribute.Key("acp.messages")
	keyStderrLines   = attribute.Key("acp.stderr.lines")
	keyEventsDropped = attribute.Key("acp.events.dropped") // events past the SDK's per-span limit
)

// The semantic conventions in use (v1.37.0: the last that names the
// JSON-RPC attributes; later ones fold them into rpc.system.name).
var (
	rpcSystem  = semconv.RPCSystemKey.String("jsonrpc")
	rpcVersion = semconv.RPCJSONRPCVersion("2.0")
)

// Bounds on what one attribute carries: free text is cut, bodies are cut
// further out. Backends refuse or truncate huge attributes anyway, and a
// span must stay far below an export request's size limit.
const (
	maxText = 4 << 10
	maxBody = 64 << 10
)

// texts redacts every string that becomes an attribute, with the rules
// exports use. Most values repeat (methods, session ids, statuses), so
// results are remembered, up to a bound.
type texts struct {
	red   *capture.Redactor
	cache map[string]string
}

const textCacheSize = 4096

// clean returns s redacted and cut to maxText.
func (t *texts) clean(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := t.cache[s]; ok {
		return v
	}
	out, _ := t.red.Text([]byte(s))
	v := cut(string(out), maxText)
	if len(s) <= 256 {
		if len(t.cache) >= textCacheSize {
			clear(t.cache)
		}
		t.cache[s] = v
	}
	return v
}

// str is a redacted string attribute.
func (t *texts) str(k attribute.Key, s string) attribute.KeyValue {
	return k.String(t.clean(s))
}

// body returns a message redacted as exports redact it, cut to maxBody.
func (t *texts) body(method string, b []byte) string {
	out, _ := t.red.Message(method, b)
	return cut(string(out), maxBody)
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
}
