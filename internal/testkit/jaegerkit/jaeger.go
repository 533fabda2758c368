// Package jaegerkit runs Jaeger v2, an OTLP backend no one here wrote,
// for the tests that send it spans, and asks its query API what it
// holds. Only tests import it. The binary comes from ACPSCOPE_JAEGER
// (.ci/jaeger.sh builds it; .ci/run sets it); without it the tests that
// need Jaeger skip and say how to get it.
package jaegerkit

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// WaitLimit bounds every wait on Jaeger: generous, for busy machines.
const WaitLimit = 2 * time.Minute

// Jaeger is a running Jaeger v2 process.
type Jaeger struct {
	OTLPHTTP, OTLPGRPC, Query string // host:port
}

const config = `service:
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

// Start runs Jaeger until the test ends and waits until its query
// API and OTLP receiver answer.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	bin := os.Getenv("ACPSCOPE_JAEGER")
	if bin == "" {
		t.Skip("ACPSCOPE_JAEGER is not set: these tests need a Jaeger v2 binary; `export ACPSCOPE_JAEGER=$(bash .ci/jaeger.sh)` builds one (.ci/run does)")
	}
	a := loopbackAddrs(t, 4)
	j := &Jaeger{Query: a[0], OTLPGRPC: a[2], OTLPHTTP: a[3]}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, config, a[0], a[1], a[2], a[3]), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "jaeger.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	// Jaeger traces itself with the OTel SDK, to localhost:4317 unless
	// told otherwise: sample none, and point it at its own receiver.
	cmd.Env = append(os.Environ(), "OTEL_TRACES_SAMPLER=always_off", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+j.OTLPGRPC)
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
		case <-time.After(WaitLimit):
			cmd.Process.Kill()
			<-exited
		}
		log.Close()
	})
	deadline := time.Now().Add(WaitLimit)
	for {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("Jaeger exited at start: %v\n%s", err, out)
		default:
		}
		resp, err := http.Get("http://" + j.Query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", j.OTLPHTTP); err == nil && resp.StatusCode == http.StatusOK {
				c.Close()
				return j
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("Jaeger did not answer on %s within %v:\n%s", j.Query, WaitLimit, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Trace is a trace as Jaeger's query API returns it.
type Trace struct {
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
		Tags      []Tag                    `json:"tags"`
		Logs      []struct{ Fields []Tag } `json:"logs"`
		ProcessID string                   `json:"processID"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
		Tags        []Tag  `json:"tags"`
	} `json:"processes"`
}

type Tag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func TagValue(tags []Tag, key string) string {
	for _, t := range tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// Get asks the query API and decodes its answer's data.
func (j *Jaeger) Get(t *testing.T, path string, q url.Values) []Trace {
	t.Helper()
	resp, err := http.Get("http://" + j.Query + path + "?" + q.Encode())
	if err != nil {
		t.Fatalf("asking Jaeger %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var body struct {
		Data []Trace `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Jaeger %s answered %s: %v", path, resp.Status, err)
	}
	return body.Data
}

// WaitTrace polls Jaeger for trace id until it holds want spans.
func (j *Jaeger) WaitTrace(t *testing.T, id string, want int) Trace {
	t.Helper()
	deadline := time.Now().Add(WaitLimit)
	for {
		got := j.Get(t, "/api/traces/"+id, nil)
		if len(got) == 1 && len(got[0].Spans) >= want {
			return got[0]
		}
		if time.Now().After(deadline) {
			n := 0
			if len(got) == 1 {
				n = len(got[0].Spans)
			}
			t.Fatalf("Jaeger holds %d spans of trace %s after %v, want %d", n, id, WaitLimit, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Search polls Jaeger for the traces of service with an operation.
func (j *Jaeger) Search(t *testing.T, service, operation string) []Trace {
	t.Helper()
	now := time.Now()
	q := url.Values{"service": {service}, "operation": {operation}, "limit": {"100"},
		"start": {fmt.Sprint(now.Add(-time.Hour).UnixMicro())}, "end": {fmt.Sprint(now.Add(time.Hour).UnixMicro())}}
	deadline := time.Now().Add(WaitLimit)
	for {
		if got := j.Get(t, "/api/traces", q); len(got) > 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger has no %s trace of service %s after %v", operation, service, WaitLimit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SpanSet is a trace's spans as "id name parent", sorted: what a live
// run and an export of its capture must agree on.
func SpanSet(tr Trace) []string {
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
