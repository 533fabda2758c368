package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// End to end against a real OTLP backend that no one here wrote: Jaeger
// v2 with in-memory storage, started by the test on loopback ports, fed
// by the proxy's --otlp and export --format otlp, and asked through its
// own query API what it holds. .ci/jaeger.sh builds the binary and
// .ci/run passes it in ACPSCOPE_JAEGER.

// jaeger is a running Jaeger v2 process.
type jaeger struct {
	otlpHTTP, otlpGRPC, query string // host:port
}

const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %[1]s
    grpc:
      endpoint: %[2]s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %[3]s
      http:
        endpoint: %[4]s
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// loopbackAddrs returns n free loopback addresses.
func loopbackAddrs(t testing.TB, n int) []string {
	var addrs []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return addrs
}

// startJaeger runs Jaeger until the test ends and waits until its query
// API and OTLP receiver answer.
func startJaeger(t testing.TB) *jaeger {
	t.Helper()
	bin := os.Getenv("ACPSCOPE_JAEGER")
	if bin == "" {
		t.Skip("ACPSCOPE_JAEGER is not set: these tests need a Jaeger v2 binary; `export ACPSCOPE_JAEGER=$(bash .ci/jaeger.sh)` builds one (.ci/run does)")
	}
	a := loopbackAddrs(t, 4)
	j := &jaeger{query: a[0], otlpGRPC: a[2], otlpHTTP: a[3]}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, a[0], a[1], a[2], a[3]), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "jaeger.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	// Jaeger traces itself with the OTel SDK, to localhost:4317 unless
	// told otherwise: sample none, and point it at its own receiver.
	cmd.Env = append(os.Environ(), "OTEL_TRACES_SAMPLER=always_off", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+j.otlpGRPC)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Jaeger %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // the waiter; ends with the process
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(waitLimit):
			cmd.Process.Kill()
			<-exited
		}
		log.Close()
	})
	deadline := time.Now().Add(waitLimit)
	for {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("Jaeger exited at start: %v\n%s", err, out)
		default:
		}
		resp, err := http.Get("http://" + j.query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", j.otlpHTTP); err == nil && resp.StatusCode == http.StatusOK {
				c.Close()
				return j
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("Jaeger did not answer on %s within %v:\n%s", j.query, waitLimit, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jaegerTrace is a trace as Jaeger's query API returns it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		TraceID       string `json:"traceID"`
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			TraceID string `json:"traceID"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags      []jaegerTag                    `json:"tags"`
		Logs      []struct{ Fields []jaegerTag } `json:"logs"`
		ProcessID string                         `json:"processID"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string      `json:"serviceName"`
		Tags        []jaegerTag `json:"tags"`
	} `json:"processes"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func tagValue(tags []jaegerTag, key string) string {
	for _, t := range tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// get asks the query API and decodes its answer's data.
func (j *jaeger) get(t *testing.T, path string, q url.Values) []jaegerTrace {
	t.Helper()
	resp, err := http.Get("http://" + j.query + path + "?" + q.Encode())
	if err != nil {
		t.Fatalf("asking Jaeger %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var body struct {
		Data []jaegerTrace `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Jaeger %s answered %s: %v", path, resp.Status, err)
	}
	return body.Data
}

// waitTrace polls Jaeger for trace id until it holds want spans.
func (j *jaeger) waitTrace(t *testing.T, id string, want int) jaegerTrace {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		got := j.get(t, "/api/traces/"+id, nil)
		if len(got) == 1 && len(got[0].Spans) >= want {
			return got[0]
		}
		if time.Now().After(deadline) {
			n := 0
			if len(got) == 1 {
				n = len(got[0].Spans)
			}
			t.Fatalf("Jaeger holds %d spans of trace %s after %v, want %d", n, id, waitLimit, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// search polls Jaeger for the traces of service with an operation.
func (j *jaeger) search(t *testing.T, service, operation string) []jaegerTrace {
	t.Helper()
	now := time.Now()
	q := url.Values{"service": {service}, "operation": {operation}, "limit": {"100"},
		"start": {fmt.Sprint(now.Add(-time.Hour).UnixMicro())}, "end": {fmt.Sprint(now.Add(time.Hour).UnixMicro())}}
	deadline := time.Now().Add(waitLimit)
	for {
		if got := j.get(t, "/api/traces", q); len(got) > 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger has no %s trace of service %s after %v", operation, service, waitLimit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// spanSet is a trace's spans as "id name parent", sorted: what a live
// run and an export of its capture must agree on.
func spanSet(tr jaegerTrace) []string {
	var out []string
	for _, s := range tr.Spans {
		parent := ""
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" {
				parent = r.SpanID
			}
		}
		out = append(out, s.SpanID+" "+s.OperationName+" "+parent)
	}
	slices.Sort(out)
	return out
}

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
	j := startJaeger(t)
	const tid, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	dir := t.TempDir()
	path := filepath.Join(dir, "live.acpscope")
	stdout, stderr, code := acpscopeEnv(t, []string{"OTEL_SERVICE_NAME=e2e-stdio"}, "demo-client", "--traceparent", "00-"+tid+"-"+parent+"-01",
		"--", self(), "--otlp", "http://"+j.otlpHTTP, "--capture", path, "--", self(), "demo-agent")
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
	tr := j.waitTrace(t, tid, len(want))
	if got := spanSet(tr); !slices.Equal(got, want) {
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
				t.Errorf("turn %s is under %s, not the traceparent's span %s", tagValue(s.Tags, "acp.seq"), ref, parent)
			}
			for key, want := range map[string]string{"rpc.system": "jsonrpc", "rpc.method": "session/prompt",
				"rpc.jsonrpc.version": "2.0", "acp.stop_reason": "end_turn", "span.kind": "client", "acp.session.id": "sess_1"} {
				if got := tagValue(s.Tags, key); got != want {
					t.Errorf("turn %s: %s = %q, want %q", tagValue(s.Tags, "acp.seq"), key, got, want)
				}
			}
			for _, l := range s.Logs {
				if tagValue(l.Fields, "event") == "acp.first_chunk" {
					firstChunks++
				}
			}
		case op == "session/request_permission":
			permissions++
			if !strings.HasPrefix(byID[ref], "execute_tool") || tagValue(s.Tags, "acp.permission.outcome") != "selected" {
				t.Errorf("permission request %s: under %q, outcome %q", tagValue(s.Tags, "acp.seq"), byID[ref], tagValue(s.Tags, "acp.permission.outcome"))
			}
		case strings.HasPrefix(op, "fs/"), strings.HasPrefix(op, "terminal/"):
			fsCalls++
			if byID[ref] != "session/prompt" || tagValue(s.Tags, "rpc.jsonrpc.request_id") == "" {
				t.Errorf("%s %s: under %q, request id %q", op, tagValue(s.Tags, "acp.seq"), byID[ref], tagValue(s.Tags, "rpc.jsonrpc.request_id"))
			}
		}
	}
	if turns != 2 || permissions != 2 || fsCalls < 8 || firstChunks != 2 {
		t.Errorf("trace %s: %d turns, %d permission requests, %d fs/terminal calls, %d first chunks; want 2, 2, ≥8, 2",
			tid, turns, permissions, fsCalls, firstChunks)
	}
	for _, p := range tr.Processes {
		if p.ServiceName != "e2e-stdio" || tagValue(p.Tags, "acp.transport") != "stdio" {
			t.Errorf("process %s %v: want service e2e-stdio, transport stdio", p.ServiceName, p.Tags)
		}
	}
	// Outside the turns: initialize is a trace of its own.
	inits := j.search(t, "e2e-stdio", "initialize")
	if len(inits) != 1 || len(inits[0].Spans) != 1 || tagValue(inits[0].Spans[0].Tags, "acp.agent.name") != "acpscope-demo-agent" {
		t.Fatalf("initialize traces: %+v", inits)
	}

	// export --format otlp over gRPC sends the same spans, ids included.
	_, stderr, code = acpscopeEnv(t, []string{"OTEL_SERVICE_NAME=e2e-export"}, "export", path, "--format", "otlp",
		"--otlp-protocol", "grpc", "--otlp-endpoint", "http://"+j.otlpGRPC)
	if code != 0 || !strings.Contains(stderr, fmt.Sprintf("sent %d spans", len(exported))) {
		t.Fatalf("export otlp over grpc: exit %d, want %d spans sent:\n%s", code, len(exported), stderr)
	}
	again := j.search(t, "e2e-export", "initialize")
	if len(again) != 1 || again[0].Spans[0].SpanID != inits[0].Spans[0].SpanID {
		t.Fatalf("the exported initialize span differs from the live one: %+v", again)
	}
}

// serve, proxy and connect each stream the spans of what they record:
// one conversation through all three lands in Jaeger three times, in the
// trace its traceparent names.
func TestOTLPJaegerNetTransports(t *testing.T) {
	j := startJaeger(t)
	const tid = "5bf92f3577b34da6a3ce929d0e0e4737"
	dir := t.TempDir()
	otlp := "http://" + j.otlpHTTP
	serve, serveURL := startNetCmdEnv(t, []string{"OTEL_SERVICE_NAME=e2e-serve"}, "acpscope serve: ", "serve", "--listen", "127.0.0.1:0",
		"--capture", filepath.Join(dir, "serve.acpscope"), "--otlp", otlp, "--", self(), "demo-agent", "--delay", "0")
	prox, proxyURL := startNetCmdEnv(t, []string{"OTEL_SERVICE_NAME=e2e-proxy"}, "acpscope proxy: ", "proxy", "--listen", "127.0.0.1:0",
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
		traces := j.search(t, service, "session/prompt")
		found := false
		for _, tr := range traces {
			for _, s := range tr.Spans {
				if s.OperationName == "session/prompt" && s.TraceID == tid && tagValue(s.Tags, "acp.stop_reason") == "end_turn" &&
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

// startNetCmdEnv is startNetCmd with extra environment variables.
func startNetCmdEnv(t *testing.T, env []string, prefix string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(self(), args...)
	cmd.Env = append(mainEnv(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() { // stderr reader: ends when the command exits
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok && strings.HasPrefix(rest, "http://") {
				urls <- strings.Fields(rest)[0]
			}
		}
	}()
	select {
	case u := <-urls:
		return cmd, u
	case <-time.After(waitLimit):
		t.Fatalf("%s did not say where it listens", args[0])
	}
	return nil, ""
}
