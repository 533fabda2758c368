package cli

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/jaegerkit"
)

// End to end against a real OTLP backend that no one here wrote: Jaeger
// v2 with in-memory storage, started by the test on loopback ports, fed
// by the proxy's --otlp and export --format otlp, and asked through its
// own query API what it holds. .ci/jaeger.sh builds the binary and
// .ci/run passes it in ACPSCOPE_JAEGER.

func jsonSpanSet(spans []jsonSpan, traceID string) []string {
	var out []string
	for _, s := range spans {
		if s.TraceID == traceID {
			out = append(out, s.SpanID+" "+s.Name+" "+s.ParentSpanID)
		}
	}
	slices.Sort(out)
	return out
}

// The demo through the stdio proxy with --otlp lands in Jaeger as the
// design says, in the trace its traceparent names; export of its capture
// writes the very same spans, and sends them over gRPC too.
func TestOTLPJaegerStdio(t *testing.T) {
	j := jaegerkit.Start(t)
	const tid, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	dir := t.TempDir()
	path := filepath.Join(dir, "live.acpscope")
	stdout, stderr, code := acpscopeEnv(t, []string{"OTEL_SERVICE_NAME=e2e-stdio"}, "demo-client", "--traceparent", "00-"+tid+"-"+parent+"-01",
		"--", self(), "--otlp", "http://"+j.OTLPHTTP, "--capture", path, "--", self(), "demo-agent")
	if code != 0 || !strings.Contains(stdout, "end_turn") {
		t.Fatalf("demo through the proxy: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if notes := captureNotes(t, path); !strings.HasSuffix(notes["otlp.spans"], " sent, 0 lost") {
		t.Fatalf("capture notes %v: want every span sent", notes)
	}

	// What export writes from the capture is what the live run sent.
	file := filepath.Join(dir, "spans.jsonl")
	if _, stderr, code := acpscopeEnv(t, nil, "export", path, "--format", "otlp-json", "-o", file); code != 0 {
		t.Fatalf("export otlp-json: exit %d\n%s", code, stderr)
	}
	exported := readOTLPJSON(t, file)
	want := jsonSpanSet(exported, tid)
	tr := j.WaitTrace(t, tid, len(want))
	if got := jaegerkit.SpanSet(tr); !slices.Equal(got, want) {
		t.Fatalf("Jaeger's trace %s and the export of the capture differ:\nJaeger:\n%s\nexport:\n%s", tid, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The tree, as Jaeger shows it.
	byID := map[string]string{}
	for _, s := range tr.Spans {
		byID[s.SpanID] = s.OperationName
	}
	var turns, permissions, fsCalls, firstChunks int
	for _, s := range tr.Spans {
		ref := ""
		if len(s.References) > 0 {
			ref = s.References[0].SpanID
		}
		switch op := s.OperationName; {
		case op == "session/prompt":
			turns++
			if ref != parent {
				t.Errorf("turn %s is under %s, not the traceparent's span %s", jaegerkit.TagValue(s.Tags, "acp.seq"), ref, parent)
			}
			for key, want := range map[string]string{"rpc.system": "jsonrpc", "rpc.method": "session/prompt",
				"rpc.jsonrpc.version": "2.0", "acp.stop_reason": "end_turn", "span.kind": "client", "acp.session.id": "sess_1"} {
				if got := jaegerkit.TagValue(s.Tags, key); got != want {
					t.Errorf("turn %s: %s = %q, want %q", jaegerkit.TagValue(s.Tags, "acp.seq"), key, got, want)
				}
			}
			for _, l := range s.Logs {
				if jaegerkit.TagValue(l.Fields, "event") == "acp.first_chunk" {
					firstChunks++
				}
			}
		case op == "session/request_permission":
			permissions++
			if !strings.HasPrefix(byID[ref], "execute_tool") || jaegerkit.TagValue(s.Tags, "acp.permission.outcome") != "selected" {
				t.Errorf("permission request %s: under %q, outcome %q", jaegerkit.TagValue(s.Tags, "acp.seq"), byID[ref], jaegerkit.TagValue(s.Tags, "acp.permission.outcome"))
			}
		case strings.HasPrefix(op, "fs/"), strings.HasPrefix(op, "terminal/"):
			fsCalls++
			if byID[ref] != "session/prompt" || jaegerkit.TagValue(s.Tags, "rpc.jsonrpc.request_id") == "" {
				t.Errorf("%s %s: under %q, request id %q", op, jaegerkit.TagValue(s.Tags, "acp.seq"), byID[ref], jaegerkit.TagValue(s.Tags, "rpc.jsonrpc.request_id"))
			}
		}
	}
	if turns != 2 || permissions != 2 || fsCalls < 8 || firstChunks != 2 {
		t.Errorf("trace %s: %d turns, %d permission requests, %d fs/terminal calls, %d first chunks; want 2, 2, ≥8, 2",
			tid, turns, permissions, fsCalls, firstChunks)
	}
	for _, p := range tr.Processes {
		if p.ServiceName != "e2e-stdio" || jaegerkit.TagValue(p.Tags, "acp.transport") != "stdio" {
			t.Errorf("process %s %v: want service e2e-stdio, transport stdio", p.ServiceName, p.Tags)
		}
	}
	// Outside the turns: initialize is a trace of its own.
	inits := j.Search(t, "e2e-stdio", "initialize")
	if len(inits) != 1 || len(inits[0].Spans) != 1 || jaegerkit.TagValue(inits[0].Spans[0].Tags, "acp.agent.name") != "acpscope-demo-agent" {
		t.Fatalf("initialize traces: %+v", inits)
	}

	// export --format otlp over gRPC sends the same spans, ids included.
	_, stderr, code = acpscopeEnv(t, []string{"OTEL_SERVICE_NAME=e2e-export"}, "export", path, "--format", "otlp",
		"--otlp-protocol", "grpc", "--otlp-endpoint", "http://"+j.OTLPGRPC)
	if code != 0 || !strings.Contains(stderr, fmt.Sprintf("sent %d spans", len(exported))) {
		t.Fatalf("export otlp over grpc: exit %d, want %d spans sent:\n%s", code, len(exported), stderr)
	}
	again := j.Search(t, "e2e-export", "initialize")
	if len(again) != 1 || again[0].Spans[0].SpanID != inits[0].Spans[0].SpanID {
		t.Fatalf("the exported initialize span differs from the live one: %+v", again)
	}
}

// serve, proxy and connect each stream the spans of what they record:
// one conversation through all three lands in Jaeger three times, in the
// trace its traceparent names.
func TestOTLPJaegerNetTransports(t *testing.T) {
	j := jaegerkit.Start(t)
	const tid = "5bf92f3577b34da6a3ce929d0e0e4737"
	dir := t.TempDir()
	otlp := "http://" + j.OTLPHTTP
	serve, serveURL := startNetCmdEnv(t, []string{"OTEL_SERVICE_NAME=e2e-serve"}, "serve", "--listen", "127.0.0.1:0",
		"--capture", filepath.Join(dir, "serve.acpscope"), "--otlp", otlp, "--", self(), "demo-agent", "--delay", "0")
	prox, proxyURL := startNetCmdEnv(t, []string{"OTEL_SERVICE_NAME=e2e-proxy"}, "proxy", "--listen", "127.0.0.1:0",
		"--upstream", serveURL, "--capture", filepath.Join(dir, "proxy.acpscope"), "--otlp", otlp)
	stdout, stderr, code := acpscopeEnv(t, []string{"OTEL_SERVICE_NAME=e2e-connect"}, "demo-client", "--traceparent", "00-"+tid+"-00f067aa0ba902b7-01",
		"--", self(), "connect", "--capture", filepath.Join(dir, "connect.acpscope"), "--otlp", otlp, proxyURL)
	if code != 0 || !strings.Contains(stdout, "end_turn") {
		t.Fatalf("demo through connect, proxy and serve: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, c := range []*exec.Cmd{prox, serve} {
		c.Process.Signal(syscall.SIGINT) // spans still queued go out as it exits
		if err := c.Wait(); err != nil {
			t.Fatalf("%s after SIGINT: %v", c.Args[1], err)
		}
	}
	for _, service := range []string{"e2e-connect", "e2e-proxy", "e2e-serve"} {
		traces := j.Search(t, service, "session/prompt")
		found := false
		for _, tr := range traces {
			for _, s := range tr.Spans {
				if s.OperationName == "session/prompt" && s.TraceID == tid && jaegerkit.TagValue(s.Tags, "acp.stop_reason") == "end_turn" &&
					tr.Processes[s.ProcessID].ServiceName == service {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s sent no finished turn into trace %s", service, tid)
		}
	}
}
