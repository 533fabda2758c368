package interop

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit/jaegerkit"
)

// TestOTLPRealSDKs: a session between two SDKs no one here wrote (the Go
// SDK's client and the TypeScript SDK's agent) goes through the stdio
// proxy with --otlp into Jaeger, where it shows as the design says; an
// export of its capture sends the very same spans to a second Jaeger.
func TestOTLPRealSDKs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real SDK peers and Jaeger; skipped with -short")
	}
	live, exported := jaegerkit.Start(t), jaegerkit.Start(t)
	t.Setenv("OTEL_SERVICE_NAME", "interop-sdks")
	o := run(t, goSDKClient, tsAgent, "--otlp", "http://"+live.OTLPHTTP)
	if o.clientExit != nil || o.proxyExit != nil {
		t.Fatalf("client: %v, acpscope: %v\n%s", o.clientExit, o.proxyExit, o.logs())
	}
	checkTransparent(t, o)
	r, err := capture.Open(o.capture)
	if err != nil {
		t.Fatal(err)
	}
	notes := r.Meta().Notes
	r.Close()
	if !strings.HasSuffix(notes["otlp.spans"], " sent, 0 lost") {
		t.Fatalf("capture notes %v: want every span sent", notes)
	}

	turns := live.Search(t, "interop-sdks", "session/prompt")
	if len(turns) != 1 {
		t.Fatalf("Jaeger holds %d traces with a turn, want the one prompt's", len(turns))
	}
	tr := turns[0]
	checkTurnTrace(t, tr)

	cmd := exec.Command(tools.acpscope, "export", o.capture, "--format", "otlp", "--otlp-protocol", "grpc", "--otlp-endpoint", "http://"+exported.OTLPGRPC)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("export --format otlp: %v\n%s", err, out)
	}
	again := exported.WaitTrace(t, tr.TraceID, len(tr.Spans))
	if got, want := jaegerkit.SpanSet(again), jaegerkit.SpanSet(tr); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the export's trace differs from the live one:\nexport:\n%s\nlive:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkTurnTrace checks one turn of the TypeScript agent as Jaeger shows
// it: the prompt at the root with its stop reason, a span per tool call
// with its final status, and the agent's requests to the client under
// the turn, the permission request under the tool call it asks about.
func checkTurnTrace(t *testing.T, tr jaegerkit.Trace) {
	t.Helper()
	byID := map[string]string{}
	for _, s := range tr.Spans {
		byID[s.SpanID] = s.OperationName
	}
	seen := map[string]int{}
	for _, s := range tr.Spans {
		parent := ""
		for _, ref := range s.References {
			if ref.RefType == "CHILD_OF" {
				parent = byID[ref.SpanID]
			}
		}
		op := s.OperationName
		seen[op]++
		tag := func(k string) string { return jaegerkit.TagValue(s.Tags, k) }
		switch {
		case op == "session/prompt":
			if parent != "" || tag("acp.stop_reason") != "end_turn" || tag("rpc.system") != "jsonrpc" || !strings.HasPrefix(tag("acp.session.id"), "ts-session-") {
				t.Errorf("turn span: parent %q, stop reason %q, rpc.system %q, session %q", parent, tag("acp.stop_reason"), tag("rpc.system"), tag("acp.session.id"))
			}
		case op == "session/request_permission":
			if parent != "execute_tool edit" || tag("acp.permission.outcome") != "selected" {
				t.Errorf("permission span under %q, outcome %q", parent, tag("acp.permission.outcome"))
			}
		case strings.HasPrefix(op, "fs/"):
			if parent != "session/prompt" || tag("rpc.jsonrpc.request_id") == "" {
				t.Errorf("%s under %q, request id %q", op, parent, tag("rpc.jsonrpc.request_id"))
			}
		case strings.HasPrefix(op, "execute_tool"):
			// The terminal's exit code decides the last one's status,
			// and the Go SDK's example client fakes its terminal.
			final := tag("acp.tool_call.status") == "completed" || op == "execute_tool execute" && tag("acp.tool_call.status") == "failed"
			if parent != "session/prompt" || !final {
				t.Errorf("%s under %q, status %q", op, parent, tag("acp.tool_call.status"))
			}
		}
	}
	want := map[string]int{"session/prompt": 1, "execute_tool read": 1, "execute_tool edit": 1, "execute_tool execute": 1,
		"fs/read_text_file": 1, "fs/write_text_file": 1, "session/request_permission": 1, "terminal/create": 1}
	for op, n := range want {
		if seen[op] != n {
			t.Errorf("%d %q spans, want %d (spans by name: %v)", seen[op], op, n, seen)
		}
	}
}
