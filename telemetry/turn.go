package telemetry

import (
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// What the builder learns from particular methods: the prompt turn and
// its usage, permissions, files, terminals, the initialize handshake and
// the model a session runs.

// turnState is what a session/prompt span gathers until its response.
type turnState struct {
	firstChunk         bool
	chunks, thoughts   int64
	tools              int64
	cancelled          bool
	ctxUsed, ctxSize   int64
	costSet            bool
	cost               float64
	currency           string
	haveUsed, haveSize bool
}

// methodAttrs are what a request's params say worth a span attribute.
func (b *Builder) methodAttrs(rec *capture.Record, params []byte) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	switch rec.Method {
	case "session/prompt":
		attrs = append(attrs, semconv.GenAIOperationNameInvokeAgent,
			b.text.str(semconv.GenAIConversationIDKey, rec.Session),
			keyPromptBlocks.Int(count(params, "prompt")))
		if c := b.conns[rec.Conn]; c != nil && c.agent != "" {
			attrs = append(attrs, b.text.str(semconv.GenAIAgentNameKey, c.agent))
		}
		if m := b.models[sessKey{rec.Conn, rec.Session}]; m != "" {
			attrs = append(attrs, b.text.str(semconv.GenAIRequestModelKey, m))
		}
	case "session/request_permission":
		attrs = append(attrs, b.text.str(keyToolID, strAt(params, "toolCall", "toolCallId")))
	case "fs/read_text_file", "fs/write_text_file":
		attrs = append(attrs, b.text.str(keyFSPath, strAt(params, "path")))
	case "terminal/create":
		cmd := strAt(params, "command")
		each(params, func(el []byte) { cmd += " " + strOf(el) }, "args")
		attrs = append(attrs, b.text.str(keyTermCommand, cmd))
	case "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release":
		attrs = append(attrs, b.text.str(keyTermID, strAt(params, "terminalId")))
	case "initialize":
		if v, ok := intAt(params, "protocolVersion"); ok {
			attrs = append(attrs, keyProtocol.Int64(v))
		}
		attrs = append(attrs, b.text.str(keyClientName, strAt(params, "clientInfo", "name")),
			b.text.str(keyClientVer, strAt(params, "clientInfo", "version")))
	case "authenticate":
		attrs = append(attrs, b.text.str(keyAuthMethod, strAt(params, "methodId")))
	case "session/new", "session/load", "session/resume", "session/fork":
		attrs = append(attrs, keyMCPServers.Int(count(params, "mcpServers")))
	}
	return attrs
}

// onRequest opens what a request starts beyond its span (a turn), and
// keeps the request's bytes where its result is read against them.
func (b *Builder) onRequest(cl *call, rec *capture.Record) {
	switch rec.Method {
	case "session/prompt":
		cl.turn = &turnState{}
		b.turns = append(b.turns, cl)
	case "session/request_permission", "session/set_model":
		cl.reqBody = append([]byte(nil), rec.Body...)
	}
}

// onResult reads a successful response's result onto its request span.
func (b *Builder) onResult(c *connState, cl *call, rec *capture.Record, result []byte) {
	s := cl.span
	switch cl.method {
	case "session/prompt":
		s.SetAttributes(b.text.str(keyStopReason, strAt(result, "stopReason")))
		b.usageAttrs(cl, result)
	case "session/request_permission":
		outcome := strAt(result, "outcome", "outcome")
		s.SetAttributes(b.text.str(keyPermOutcome, outcome))
		if id := strAt(result, "outcome", "optionId"); id != "" {
			s.SetAttributes(b.text.str(keyPermOption, id))
			if k := optionKind(cl.reqBody, id); k != "" {
				s.SetAttributes(b.text.str(keyPermKind, k))
			}
		}
	case "terminal/create":
		s.SetAttributes(b.text.str(keyTermID, strAt(result, "terminalId")))
	case "terminal/wait_for_exit":
		b.exitAttrs(s, result)
	case "terminal/output":
		b.exitAttrs(s, at(result, "exitStatus"))
	case "initialize":
		c.agent = strAt(result, "agentInfo", "name")
		attrs := []attribute.KeyValue{b.text.str(keyAgentName, c.agent),
			b.text.str(keyAgentVer, strAt(result, "agentInfo", "version"))}
		if v, ok := intAt(result, "protocolVersion"); ok {
			attrs = append(attrs, keyProtocol.Int64(v))
		}
		s.SetAttributes(attrs...)
		c.span.SetAttributes(attrs...)
	case "session/new", "session/load", "session/resume", "session/fork":
		if id := strAt(result, "sessionId"); id != "" {
			s.SetAttributes(b.text.str(keySession, id))
		}
		session := strAt(result, "sessionId")
		if session == "" {
			session = cl.session
		}
		b.noteModel(rec.Conn, session, result)
	case "session/set_model":
		if m := strAt(cl.reqBody, "params", "modelId"); m != "" {
			b.models[sessKey{rec.Conn, cl.session}] = m
		}
	case "session/set_config_option":
		b.noteModel(rec.Conn, cl.session, result)
	}
}

// usageAttrs reads the turn's token usage (PromptResponse.usage) with
// the GenAI conventions where they have a name.
func (b *Builder) usageAttrs(cl *call, result []byte) {
	u := at(result, "usage")
	ints := []struct {
		key  attribute.Key
		name string
	}{
		{semconv.GenAIUsageInputTokensKey, "inputTokens"},
		{semconv.GenAIUsageOutputTokensKey, "outputTokens"},
		{keyTotalTokens, "totalTokens"},
		{keyThought, "thoughtTokens"},
		{keyCachedRead, "cachedReadTokens"},
		{keyCachedWrite, "cachedWriteTokens"},
	}
	for _, f := range ints {
		if v, ok := intAt(u, f.name); ok {
			cl.span.SetAttributes(f.key.Int64(v))
		}
	}
}

// exitAttrs reads a terminal's exit status.
func (b *Builder) exitAttrs(s trace.Span, st []byte) {
	if v, ok := intAt(st, "exitCode"); ok {
		s.SetAttributes(keyTermExitCode.Int64(v))
	}
	if sig := strAt(st, "signal"); sig != "" {
		s.SetAttributes(b.text.str(keyTermSignal, sig))
	}
}

// optionKind finds the kind of the permission option the human chose.
func optionKind(reqBody []byte, id string) string {
	kind := ""
	each(at(reqBody, "params"), func(el []byte) {
		if strAt(el, "optionId") == id {
			kind = strAt(el, "kind")
		}
	}, "options")
	return kind
}

// noteModel remembers the model a session result names: the unstable
// models.currentModelId, or a config option of category "model".
func (b *Builder) noteModel(conn uint32, session string, obj []byte) {
	if session == "" {
		return
	}
	m := strAt(obj, "models", "currentModelId")
	each(obj, func(el []byte) {
		if strAt(el, "category") == "model" {
			if v := strAt(el, "currentValue"); v != "" {
				m = v
			}
		}
	}, "configOptions")
	if m != "" {
		b.models[sessKey{conn, session}] = m
	}
}

// turnOf returns the open turn of a session, nil when none.
func (b *Builder) turnOf(conn uint32, session string) *call {
	for i := len(b.turns) - 1; i >= 0; i-- {
		if t := b.turns[i]; t.key.conn == conn && t.session == session {
			return t
		}
	}
	return nil
}

// latestTurn is the turn a stderr line most likely belongs to: the last
// one begun on its connection, else the last one begun at all.
func (b *Builder) latestTurn(conn uint32) *call {
	for i := len(b.turns) - 1; i >= 0; i-- {
		if b.turns[i].key.conn == conn {
			return b.turns[i]
		}
	}
	if n := len(b.turns); n > 0 {
		return b.turns[n-1]
	}
	return nil
}

// endTurn closes a turn: its tallies become attributes.
func (b *Builder) endTurn(cl *call, t int64) {
	for i, x := range b.turns {
		if x == cl {
			b.turns = append(b.turns[:i], b.turns[i+1:]...)
			break
		}
	}
	ts := cl.turn
	attrs := []attribute.KeyValue{keyMsgChunks.Int64(ts.chunks), keyThoughtChunk.Int64(ts.thoughts),
		keyToolCalls.Int64(ts.tools)}
	if ts.cancelled {
		attrs = append(attrs, keyCancelled.Bool(true))
	}
	if ts.haveUsed {
		attrs = append(attrs, keyCtxUsed.Int64(ts.ctxUsed))
	}
	if ts.haveSize {
		attrs = append(attrs, keyCtxSize.Int64(ts.ctxSize))
	}
	if ts.costSet {
		attrs = append(attrs, keyCostAmount.Float64(ts.cost), b.text.str(keyCostCurrency, ts.currency))
	}
	cl.span.SetAttributes(attrs...)
}

// firstChunk marks the turn's time to first chunk, as an event and an
// attribute.
func (b *Builder) firstChunk(cl *call, rec *capture.Record) {
	if cl.turn.firstChunk {
		return
	}
	cl.turn.firstChunk = true
	ms := float64(rec.Time-cl.start) / float64(time.Millisecond)
	cl.span.event("acp.first_chunk", at0(rec.Time), trace.WithAttributes(keyTTFC.Float64(ms), keySeq.Int64(int64(rec.Seq))))
	cl.span.SetAttributes(keyTTFC.Float64(ms))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// isFinal reports a tool call status after which nothing more happens.
func isFinal(status string) bool {
	return status == "completed" || status == "failed"
}

// updateName is the event name of a session/update variant.
func updateName(kind string) string {
	if kind == "" {
		return "session/update"
	}
	return "acp." + strings.ReplaceAll(cut(kind, 64), " ", "_")
}
