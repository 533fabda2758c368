package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
)

// Spans over OTLP from the command line: the proxy keeps forwarding and
// exits whatever the backend does, and export writes what a live run
// sends. The end-to-end tests against a real backend are in
// otlp_jaeger_test.go.

// acpscopeEnv runs acpscope with extra environment variables.
func acpscopeEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, self(), args...)
	cmd.Env = append(append(mainEnv(), "ACPSCOPE_DIR="+t.TempDir()), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running acpscope %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// refusedURL is a loopback URL where nothing listens.
func refusedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// hangingURL is a loopback server that never answers, until the test ends.
func hangingURL(t *testing.T) string {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv.URL
}

func captureNotes(t testing.TB, path string) map[string]string {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.Meta().Notes
}

// A backend that refuses or hangs costs the editor nothing: the demo
// conversation goes through, the proxy exits 0, the loss is said once
// (and summed up once) and kept in the capture's notes.
func TestOTLPBackendDownOrHanging(t *testing.T) {
	tests := []struct {
		name string
		url  func(*testing.T) string
		env  bool // give the endpoint through OTEL_EXPORTER_OTLP_ENDPOINT
	}{
		{"refused", refusedURL, false},
		{"hanging", hangingURL, false},
		{"refused, from the environment", refusedURL, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.acpscope")
			url := tc.url(t)
			proxyArgs := []string{"--otlp", url}
			var env []string
			if tc.env {
				proxyArgs, env = nil, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + url}
			}
			args := append([]string{"demo-client", "--", self(), "--capture", path}, proxyArgs...)
			stdout, stderr, code := acpscopeEnv(t, env, append(args, "--", self(), "demo-agent")...)
			if code != 0 || !strings.Contains(stdout, "end_turn") {
				t.Fatalf("demo through the proxy: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if n := strings.Count(stderr, "are being lost"); n != 1 {
				t.Errorf("the loss is said %d times, want once:\n%s", n, stderr)
			}
			if n := strings.Count(stderr, "spans were lost"); n != 1 {
				t.Errorf("the loss is summed up %d times, want once:\n%s", n, stderr)
			}
			if !strings.Contains(stderr, "sending spans to "+url) {
				t.Errorf("the proxy does not say where spans go:\n%s", stderr)
			}
			notes := captureNotes(t, path)
			if !strings.HasPrefix(notes["otlp.spans"], "0 sent, ") || notes["otlp.spans"] == "0 sent, 0 lost" || notes["otlp.error"] == "" {
				t.Errorf("capture notes %v: want every span counted lost, with the reason", notes)
			}
			info, stderr, code := acpscopeEnv(t, nil, "info", path)
			if code != 0 || !strings.Contains(info, "otlp.spans") || !strings.Contains(info, notes["otlp.spans"]) || !strings.Contains(info, "otlp.error") {
				t.Errorf("info does not show where the spans went: exit %d\n%s%s", code, info, stderr)
			}
		})
	}
}

// --no-capture leaves nothing to build spans from: said, not failed.
func TestOTLPWithoutCapture(t *testing.T) {
	stdout, stderr, code := acpscopeEnv(t, nil, "demo-client", "--", self(), "--no-capture", "--otlp", refusedURL(t), "--", self(), "demo-agent")
	if code != 0 || !strings.Contains(stdout, "end_turn") {
		t.Fatalf("demo through the proxy: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "--no-capture records nothing: no spans will be sent") {
		t.Errorf("--otlp with --no-capture is not explained:\n%s", stderr)
	}
	if strings.Contains(stderr, "are being lost") {
		t.Errorf("spans were attempted without a capture:\n%s", stderr)
	}
}

func TestOTLPUsageErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.acpscope")
	if _, stderr, code := acpscopeEnv(t, nil, "demo-client", "--", self(), "--capture", path, "--", self(), "demo-agent"); code != 0 {
		t.Fatalf("recording the demo: exit %d\n%s", code, stderr)
	}
	tests := []struct {
		name string
		args []string
		env  []string
		code int
		want string
	}{
		{"export otlp without an endpoint", []string{"export", path, "--format", "otlp"}, nil, 2, "--otlp-endpoint URL"},
		{"export otlp to a bad URL", []string{"export", path, "--format", "otlp", "--otlp-endpoint", "collector:4318"}, nil, 2, "give the collector's URL"},
		{"export otlp with a bad protocol", []string{"export", path, "--format", "otlp", "--otlp-endpoint", "http://127.0.0.1:1", "--otlp-protocol", "zipkin"}, nil, 2, "use grpc, http/protobuf or http/json"},
		{"export otlp with --no-redact", []string{"export", path, "--format", "otlp-json", "--no-redact"}, nil, 2, "always redacted"},
		{"export otlp to a file", []string{"export", path, "--format", "otlp", "-o", "x.json"}, nil, 2, "use --format otlp-json"},
		{"export otlp to nobody", []string{"export", path, "--format", "otlp", "--otlp-endpoint", refusedURL(t)}, nil, 1, "did not reach"},
		{"export otlp disabled by the environment", []string{"export", path, "--format", "otlp"},
			[]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_SDK_DISABLED=true"}, 2, "--otlp-endpoint URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := acpscopeEnv(t, tc.env, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d, with %q in:\n%s", code, tc.code, tc.want, stderr)
			}
		})
	}
}

// otlpJSONSpans reads an OTLP JSON lines file: span ids (lower case) by
// name, and every line's resource.
type jsonSpan struct {
	TraceID, SpanID, ParentSpanID, Name string
	Attributes                          []struct {
		Key   string
		Value map[string]any
	}
}

func readOTLPJSON(t *testing.T, path string) []jsonSpan {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []jsonSpan
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct{ Spans []jsonSpan }
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			t.Fatalf("%s: a line that is not JSON: %v", path, err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					s.TraceID, s.SpanID, s.ParentSpanID = strings.ToLower(s.TraceID), strings.ToLower(s.SpanID), strings.ToLower(s.ParentSpanID)
					out = append(out, s)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (s jsonSpan) attr(key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			for _, v := range a.Value {
				return fmt.Sprint(v)
			}
		}
	}
	return ""
}

// export --format otlp-json writes the spans; -o - writes them to stdout.
func TestExportOTLPJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.acpscope")
	const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	if _, stderr, code := acpscopeEnv(t, nil, "demo-client", "--traceparent", traceparent, "--", self(), "--capture", path,
		"--otlp", refusedURL(t), "--", self(), "demo-agent"); code != 0 {
		t.Fatalf("recording the demo: exit %d\n%s", code, stderr)
	}
	// The trace context went through as the client sent it: acpscope
	// reads _meta, it never adds or changes it.
	raw, _, _ := acpscopeEnv(t, nil, "dump", path, "--format", "raw")
	if n := strings.Count(raw, `"_meta"`); n != 2 || strings.Count(raw, `"_meta":{"traceparent":"`+traceparent+`"}`) != 2 {
		t.Fatalf("the wire holds %d _meta members, want the client's two, unchanged:\n%s", n, raw)
	}
	out := filepath.Join(dir, "spans.jsonl")
	_, stderr, code := acpscopeEnv(t, nil, "export", path, "--format", "otlp-json", "-o", out)
	if code != 0 || !strings.Contains(stderr, "wrote ") {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the span file: %v, mode %v; want 0600", err, fi.Mode())
	}
	spans := readOTLPJSON(t, out)
	turns := 0
	for _, s := range spans {
		if s.Name == "session/prompt" {
			turns++
			if s.TraceID != "0af7651916cd43dd8448eb211c80319c" || s.ParentSpanID != "b7ad6b7169203331" {
				t.Errorf("turn %s is in trace %s under %s, not the traceparent's", s.attr("acp.seq"), s.TraceID, s.ParentSpanID)
			}
			if s.attr("acp.stop_reason") != "end_turn" {
				t.Errorf("turn %s: stop reason %q", s.attr("acp.seq"), s.attr("acp.stop_reason"))
			}
		}
	}
	if turns != 2 || len(spans) < 20 {
		t.Fatalf("%d spans with %d turns in the file, want the demo's two turns and their children", len(spans), turns)
	}
	stdout, _, code := acpscopeEnv(t, nil, "export", path, "--format", "otlp-json")
	if code != 0 || strings.Count(stdout, "\n") == 0 || !strings.Contains(stdout, `"resourceSpans"`) {
		t.Fatalf("export to stdout: exit %d\n%.300s", code, stdout)
	}
}
