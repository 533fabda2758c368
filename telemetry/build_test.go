package telemetry

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// A prompt turn as a real agent runs it: the turn is the root, the
// agent's requests and tool calls its children, the permission request
// the child of the tool call it asks about.
var turnSteps = []step{
	client(0, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zed","version":"0.200"}}}`),
	agent(5, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"claude-code","version":"1.2.3"}}}`),
	client(10, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
	agent(20, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","models":{"currentModelId":"sonnet-4","availableModels":[]}}}`),
	stderr(25, `agent: ready`),
	client(100, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"fix it"}]}}`),
	agent(150, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}}`),
	agent(220, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"On it"}}}}`),
	agent(230, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"completed"},{"content":"b","priority":"low","status":"pending"}]}}}`),
	agent(240, `{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/w/main.go"}}`),
	client(260, `{"jsonrpc":"2.0","id":0,"result":{"content":"package main"}}`),
	agent(300, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Edit main.go","kind":"edit","status":"pending"}}}`),
	agent(310, `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"call_1"},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}}`),
	stderr(320, `agent: waiting for permission`),
	client(2310, `{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}`),
	agent(2320, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"in_progress"}}}`),
	agent(2400, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed"}}}`),
	agent(2450, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}}}`),
	agent(2500, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","usage":{"totalTokens":1500,"inputTokens":1000,"outputTokens":400,"thoughtTokens":100,"cachedReadTokens":800}}}`),
	client(3000, `{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"nope"}}`),
	agent(3010, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown mode nope"}}`),
}

func TestTurnTree(t *testing.T) {
	spans := build(t, turnSteps, BuilderOptions{})
	turn := named(t, spans, "session/prompt")
	fs := named(t, spans, "fs/read_text_file")
	tool := named(t, spans, "execute_tool edit")
	perm := named(t, spans, "session/request_permission")
	conn := named(t, spans, "acp connection")
	setMode := named(t, spans, "session/set_mode")
	init := named(t, spans, "initialize")

	links := []struct {
		child, parent tracetest.SpanStub
	}{{fs, turn}, {tool, turn}, {perm, tool}}
	for _, l := range links {
		if !isChild(l.child, l.parent) {
			t.Errorf("%s is not a child of %s", l.child.Name, l.parent.Name)
		}
	}
	for _, root := range []tracetest.SpanStub{turn, conn, setMode, init} {
		if root.Parent.IsValid() {
			t.Errorf("%s has a parent; want the root of its own trace", root.Name)
		}
	}
	if turn.SpanContext.TraceID() == init.SpanContext.TraceID() {
		t.Errorf("the turn shares initialize's trace: want one trace per turn")
	}

	attrs := []struct {
		span      tracetest.SpanStub
		key, want string
	}{
		{turn, "rpc.system", "jsonrpc"},
		{turn, "rpc.method", "session/prompt"},
		{turn, "rpc.jsonrpc.request_id", "2"},
		{turn, "rpc.jsonrpc.version", "2.0"},
		{turn, "acp.session.id", "s1"},
		{turn, "acp.stop_reason", "end_turn"},
		{turn, "gen_ai.usage.input_tokens", "1000"},
		{turn, "gen_ai.usage.output_tokens", "400"},
		{turn, "acp.usage.total_tokens", "1500"},
		{turn, "acp.usage.cached_read_tokens", "800"},
		{turn, "gen_ai.request.model", "sonnet-4"},
		{turn, "gen_ai.agent.name", "claude-code"},
		{turn, "gen_ai.operation.name", "invoke_agent"},
		{turn, "acp.time_to_first_chunk_ms", "120"},
		{turn, "acp.chunks.message", "1"},
		{turn, "acp.chunks.thought", "1"},
		{turn, "acp.tool_calls", "1"},
		{turn, "acp.context.used", "1200"},
		{turn, "acp.cost.amount", "0.25"},
		{turn, "acp.cost.currency", "USD"},
		{turn, "acp.seq", "6"},
		{fs, "acp.fs.path", "/w/main.go"},
		{fs, "acp.direction", "agent_to_client"},
		{fs, "rpc.jsonrpc.request_id", "0"},
		{tool, "acp.tool_call.status", "completed"},
		{tool, "acp.tool_call.title", "Edit main.go"},
		{tool, "gen_ai.tool.call.id", "call_1"},
		{perm, "acp.permission.outcome", "selected"},
		{perm, "acp.permission.option_id", "yes"},
		{perm, "acp.permission.option_kind", "allow_once"},
		{setMode, "rpc.jsonrpc.error_code", "-32602"},
		{setMode, "rpc.jsonrpc.error_message", "unknown mode nope"},
		{setMode, "error.type", "invalid_params"},
		{init, "acp.agent.name", "claude-code"},
		{init, "acp.client.name", "zed"},
		{conn, "acp.messages", "19"},
		{conn, "acp.stderr.lines", "2"},
	}
	for _, a := range attrs {
		if got := attr(a.span, a.key); got != a.want {
			t.Errorf("%s %s = %s, want %s", a.span.Name, a.key, got, a.want)
		}
	}
	// Durations are the wire's: the permission span is the human's time.
	if d := perm.EndTime.Sub(perm.StartTime).Milliseconds(); d != 2000 {
		t.Errorf("permission span lasts %d ms, want the 2000 ms the human took", d)
	}
	if d := turn.EndTime.Sub(turn.StartTime).Milliseconds(); d != 2400 {
		t.Errorf("turn lasts %d ms, want 2400", d)
	}
	if setMode.Status.Code != codes.Error || turn.Status.Code == codes.Error {
		t.Errorf("statuses: set_mode %v, turn %v; want error, unset", setMode.Status, turn.Status)
	}
	if turn.SpanKind != trace.SpanKindClient || tool.SpanKind != trace.SpanKindInternal {
		t.Errorf("kinds: turn %v, tool %v; want client, internal", turn.SpanKind, tool.SpanKind)
	}
	events := map[string]string{}
	for _, e := range turn.Events {
		events[e.Name] = eventAttr(e.Attributes, "acp.stderr.text") + eventAttr(e.Attributes, "acp.plan.entries")
	}
	for name, want := range map[string]string{"acp.first_chunk": "<absent><absent>", "acp.plan": "<absent>2",
		"acp.stderr": "agent: waiting for permission<absent>"} {
		if got, ok := events[name]; !ok || got != want {
			t.Errorf("turn event %s: %q (present %v), want %q", name, got, ok, want)
		}
	}
	if len(conn.Events) != 1 || eventAttr(conn.Events[0].Attributes, "acp.stderr.text") != "agent: ready" {
		t.Errorf("connection events %v: want the stderr line written outside any turn", conn.Events)
	}
	if len(tool.Events) != 3 {
		t.Errorf("tool call has %d status events, want 3 (pending, in_progress, completed)", len(tool.Events))
	}
}

// A prompt carrying W3C trace context joins the editor's trace: its span
// is a child of the traceparent's span, and tracestate is kept.
func TestTraceParent(t *testing.T) {
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tests := []struct {
		name      string
		meta      string
		wantTrace bool
	}{
		{"traceparent and tracestate", `"_meta":{"traceparent":"00-` + tid + `-` + sid + `-01","tracestate":"vendor=x"},`, true},
		{"traceparent alone", `"_meta":{"traceparent":"00-` + tid + `-` + sid + `-01"},`, true},
		{"malformed traceparent", `"_meta":{"traceparent":"00-zz-` + sid + `-01"},`, false},
		{"no _meta", ``, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spans := build(t, []step{
				client(0, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{`+tc.meta+`"sessionId":"s1","prompt":[]}}`),
				agent(5, `{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}`),
				client(6, `{"jsonrpc":"2.0","id":7,"result":{"content":""}}`),
				agent(10, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`),
			}, BuilderOptions{})
			turn := named(t, spans, "session/prompt")
			fs := named(t, spans, "fs/read_text_file")
			inTrace := turn.SpanContext.TraceID().String() == tid && turn.Parent.SpanID().String() == sid
			if inTrace != tc.wantTrace {
				t.Fatalf("turn trace %s parent %s: in the traceparent's trace = %v, want %v",
					turn.SpanContext.TraceID(), turn.Parent.SpanID(), inTrace, tc.wantTrace)
			}
			if !isChild(fs, turn) {
				t.Errorf("fs/read_text_file left its turn")
			}
			if strings.Contains(tc.meta, "tracestate") && turn.SpanContext.TraceState().String() != "vendor=x" {
				t.Errorf("tracestate %q, want vendor=x", turn.SpanContext.TraceState().String())
			}
		})
	}
}

func TestUnfinishedWork(t *testing.T) {
	spans := build(t, []step{
		client(0, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`),
		agent(5, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Run","kind":"execute","status":"in_progress"}}}`),
		client(7, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`),
		agent(9, `{"jsonrpc":"2.0","id":"x","result":{}}`),
		stderr(40, `killed`),
	}, BuilderOptions{})
	turn := named(t, spans, "session/prompt")
	tool := named(t, spans, "execute_tool execute")
	for _, c := range []struct {
		span      tracetest.SpanStub
		key, want string
	}{
		{turn, "acp.unanswered", "true"},
		{turn, "acp.cancelled", "true"},
		{tool, "acp.tool_call.unfinished", "true"},
		{tool, "acp.tool_call.status", "in_progress"},
	} {
		if got := attr(c.span, c.key); got != c.want {
			t.Errorf("%s %s = %s, want %s", c.span.Name, c.key, got, c.want)
		}
	}
	if turn.EndTime.Sub(turn.StartTime).Milliseconds() != 40 || turn.Status.Code != codes.Error {
		t.Errorf("an unanswered turn ends at the last record with an error status; got %v, %v",
			turn.EndTime.Sub(turn.StartTime), turn.Status)
	}
	conn := named(t, spans, "acp connection")
	var unpaired bool
	for _, e := range conn.Events {
		unpaired = unpaired || e.Name == "acp.unpaired_response"
	}
	if !unpaired {
		t.Errorf("the response to no request is not on the connection span: %v", conn.Events)
	}
}

// Secrets never reach a span, bodies or not.
func TestRedaction(t *testing.T) {
	const secret = "sk-live0123456789abcdefSECRET"
	steps := []step{
		client(0, `{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"key","token":"`+secret+`"}}`),
		agent(1, `{"jsonrpc":"2.0","id":1,"result":{}}`),
		client(2, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"m","command":"x","args":[],"env":[{"name":"API_KEY","value":"`+secret+`"}]}]}}`),
		agent(3, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`),
		client(4, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"use key `+secret+`"}]}}`),
		stderr(5, `using api_key=`+secret),
		agent(6, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"curl -H 'Authorization: Bearer `+secret+`'","kind":"execute"}}}`),
		agent(7, `{"jsonrpc":"2.0","id":9,"method":"terminal/create","params":{"sessionId":"s1","command":"export","args":["TOKEN=`+secret+`"]}}`),
		client(8, `{"jsonrpc":"2.0","id":9,"error":{"code":-32000,"message":"bad token `+secret+`"}}`),
		agent(9, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[{"content":"`+secret+`","priority":"high","status":"pending"}]}}}`),
		agent(10, `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
	}
	for _, bodies := range []bool{false, true} {
		out := dump(build(t, steps, BuilderOptions{Bodies: bodies}))
		if strings.Contains(out, "SECRET") {
			t.Errorf("bodies=%v: a secret reached the spans:\n%s", bodies, out)
		}
		if !strings.Contains(out, `\u003credacted\u003e`) { // "<redacted>", as JSON escapes it
			t.Errorf("bodies=%v: nothing was marked redacted:\n%s", bodies, out)
		}
		if has := strings.Contains(out, "acp.request.body"); has != bodies {
			t.Errorf("bodies=%v: request bodies attached = %v", bodies, has)
		}
	}
}

// The same records give the same spans, ids included: what lets a live
// run and an export of its capture agree.
func TestBuildIsDeterministic(t *testing.T) {
	a, b := flatten(build(t, turnSteps, BuilderOptions{})), flatten(build(t, turnSteps, BuilderOptions{}))
	if len(a) == 0 || dumpFlat(a) != dumpFlat(b) {
		t.Fatalf("two builds differ:\n%s\n---\n%s", dumpFlat(a), dumpFlat(b))
	}
}

// A peer that never answers (an echo agent turns every request into one
// of its own) must not grow the builder without end: past maxPending the
// oldest requests end as unanswered.
func TestPendingIsBounded(t *testing.T) {
	p, exp := memPipeline(t, Config{QueueSize: 1 << 16})
	b, err := p.Builder(testMeta, BuilderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = maxPending + 2500
	var steps []step
	for i := range n {
		steps = append(steps, client(int64(i), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"bench/ping"}`, i)))
	}
	for _, r := range records(steps) {
		b.Record(&r)
		if len(b.pending) > maxPending {
			t.Fatalf("%d requests pending, want at most %d", len(b.pending), maxPending)
		}
	}
	b.Finish()
	if st := p.Shutdown(); st.Spans != n+1 || st.Lost != 0 {
		t.Fatalf("stats %+v, want %d spans, none lost", st, n+1)
	}
	// Request k (at k ms) is evicted by request k+maxPending: it lasts
	// exactly maxPending ms; those ended by Finish last less.
	evicted := 0
	for _, s := range exp.GetSpans() {
		if attr(s, "acp.unanswered") == "true" && s.EndTime.Sub(s.StartTime) == maxPending*time.Millisecond {
			evicted++
		}
	}
	if evicted != n-maxPending {
		t.Fatalf("%d spans ended before the capture did, want the %d oldest", evicted, n-maxPending)
	}
}

// A serve or proxy running for days sees a connection per editor window:
// past maxConns the connection quiet the longest has its span ended.
func TestConnectionsAreBounded(t *testing.T) {
	p, exp := memPipeline(t, Config{QueueSize: 1 << 16})
	b, err := p.Builder(testMeta, BuilderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = maxConns + 10
	for i := range n {
		r := records([]step{stderr(int64(i), "hello")})[0]
		r.Seq, r.Conn = uint64(i+1), uint32(i)
		b.Record(&r)
		if len(b.conns) > maxConns {
			t.Fatalf("%d connection spans open, want at most %d", len(b.conns), maxConns)
		}
	}
	b.Finish()
	p.Shutdown()
	ids := map[string]bool{}
	for _, s := range exp.GetSpans() {
		ids[s.SpanContext.SpanID().String()] = true
	}
	if len(exp.GetSpans()) != n || len(ids) != n {
		t.Fatalf("%d connection spans with %d distinct ids, want %d", len(exp.GetSpans()), len(ids), n)
	}
}

// TestFaults checks that what acpscope altered shows as acp.fault events
// and that spans follow what each side received: a dropped answer leaves
// its turn unanswered, a request answered in the agent's place still
// gets its span, ended by the made-up answer.
func TestFaults(t *testing.T) {
	plan := func(s step, id uint64, rule, action, stage string) step {
		s.fault = &protocol.Fault{ID: id, Rule: rule, Action: action, Stage: stage, By: protocol.ByPlan}
		return s
	}
	spans := build(t, []step{
		client(0, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`),
		plan(agent(3, `{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}`), 1, "no-files", protocol.ActionAnswer, protocol.StageDropped),
		plan(client(3, `{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"refused"}}`), 1, "no-files", protocol.ActionAnswer, protocol.StageInjected),
		plan(agent(20, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`), 2, "lose", protocol.ActionDrop, protocol.StageDropped),
		stderr(30, `done`),
	}, BuilderOptions{})
	turn := named(t, spans, "session/prompt")
	if got := attr(turn, "acp.unanswered"); got != "true" {
		t.Errorf("the turn whose answer was dropped: acp.unanswered = %s, want true", got)
	}
	read := named(t, spans, "fs/read_text_file")
	if got := attr(read, "rpc.jsonrpc.error_code"); got != "-32603" {
		t.Errorf("the request answered by acpscope: error code %s, want -32603", got)
	}
	var got []string
	for _, e := range turn.Events {
		if e.Name == "acp.fault" {
			got = append(got, eventAttr(e.Attributes, "acp.fault.rule")+"/"+eventAttr(e.Attributes, "acp.fault.action")+"/"+eventAttr(e.Attributes, "acp.fault.stage"))
		}
	}
	want := []string{"no-files/answer/dropped", "no-files/answer/injected", "lose/drop/dropped"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("acp.fault events on the turn: %q, want %q", got, want)
	}
}
