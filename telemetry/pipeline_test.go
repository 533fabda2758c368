package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines collects warnings.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) add(s string) {
	l.mu.Lock()
	l.all = append(l.all, s)
	l.mu.Unlock()
}

func (l *lines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.all...)
}

// manySteps is a long conversation: n prompt turns, each with an agent
// request inside.
func manySteps(n int) []step {
	var out []step
	for i := range n {
		at := int64(i * 10)
		out = append(out,
			client(at, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`, i)),
			agent(at+1, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/a"}}`, i)),
			client(at+2, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":""}}`, i)),
			agent(at+3, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, i)))
	}
	return out
}

// refusingEndpoint is a loopback URL where nothing listens.
func refusingEndpoint(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// hangingEndpoint is a loopback server that takes requests and never
// answers, until the test ends.
func hangingEndpoint(t *testing.T) string {
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

// A backend that is down or hangs loses spans: counted, said once, and
// never waited for beyond the flush timeout.
func TestBackendDownOrHanging(t *testing.T) {
	tests := []struct {
		name     string
		endpoint func(*testing.T) string
		protocol string
	}{
		{"refused, http", refusingEndpoint, "http/protobuf"},
		{"refused, grpc", refusingEndpoint, "grpc"},
		{"hanging, http", hangingEndpoint, "http/protobuf"},
		{"hanging, http/json", hangingEndpoint, "http/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var warned lines
			p, err := Start(Config{Endpoint: tc.endpoint(t), Protocol: tc.protocol, FlushTimeout: 300 * time.Millisecond,
				QueueSize: 64, Warn: warned.add}, testMeta, "")
			if err != nil {
				t.Fatal(err)
			}
			b, err := p.Builder(testMeta, BuilderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fed := make(chan struct{})
			go func() { // the watcher's part: it must never block on the backend
				defer close(fed)
				for _, r := range records(manySteps(500)) {
					b.Record(&r)
				}
				b.Finish()
			}()
			select {
			case <-fed:
			case <-time.After(waitLimit):
				t.Fatal("feeding the builder blocked on the backend")
			}
			done := make(chan Stats, 1)
			go func() { done <- p.Shutdown() }()
			var st Stats
			select {
			case st = <-done:
			case <-time.After(waitLimit):
				t.Fatal("Shutdown waited on the backend")
			}
			if st.Spans != 1001 || st.Sent != 0 || st.Lost != st.Spans || st.Err == "" {
				t.Fatalf("stats %+v: want 1001 spans, all lost, with a reason", st)
			}
			w := warned.get()
			if len(w) != 2 || !strings.Contains(w[0], "are being lost") || !strings.Contains(w[1], "1001 of 1001 spans were lost") {
				t.Fatalf("warnings %q: want one when loss began and one summary", w)
			}
			notes := st.Notes("x", 0)
			if notes["otlp.spans"] != "0 sent, 1001 lost" || notes["otlp.error"] == "" {
				t.Fatalf("notes %v", notes)
			}
		})
	}
}

// A backend that takes everything gets every span; nothing is said.
func TestBackendTakesAll(t *testing.T) {
	var mu sync.Mutex
	var requests int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/base/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+r.URL.Path+" "+r.Header.Get("Content-Type"), http.StatusBadRequest)
			return
		}
		mu.Lock()
		requests++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	var warned lines
	p, err := Start(Config{Endpoint: srv.URL + "/base/", Warn: warned.add}, testMeta, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Builder(testMeta, BuilderOptions{})
	for _, r := range records(manySteps(300)) {
		b.Record(&r)
	}
	b.Finish()
	st := p.Shutdown()
	if st.Sent != 601 || st.Lost != 0 || len(warned.get()) != 0 || requests == 0 {
		t.Fatalf("stats %+v, %d requests, warnings %q: want 601 sent and silence", st, requests, warned.get())
	}
}

var hexID = regexp.MustCompile(`^[0-9A-Fa-f]+$`) // the specification: hex, either case

// The OTLP JSON file holds one ExportTraceServiceRequest per line, in the
// encoding the specification asks for: hex ids, numeric enums.
func TestJSONFile(t *testing.T) {
	var buf bytes.Buffer
	p, err := StartFile(Config{}, testMeta, "x.acpscope", &buf)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Builder(testMeta, BuilderOptions{})
	for _, r := range records(turnSteps) {
		b.Record(&r)
	}
	b.Finish()
	if st := p.Shutdown(); st.Lost != 0 || st.Sent == 0 {
		t.Fatalf("stats %+v", st)
	}
	type span struct {
		TraceID, SpanID, ParentSpanID, Name string
		Kind                                int
		StartTimeUnixNano                   string
	}
	var req struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []struct{ Key string }
			}
			ScopeSpans []struct {
				Scope struct{ Name string }
				Spans []span
			}
		}
	}
	var got []string
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if len(s.TraceID) != 32 || len(s.SpanID) != 16 || !hexID.MatchString(s.TraceID+s.SpanID) || s.Kind == 0 || s.StartTimeUnixNano == "" {
						t.Errorf("span %+v: want hex ids and a numeric kind", s)
					}
					got = append(got, s.Name)
				}
			}
		}
	}
	sort.Strings(got)
	want := []string{"acp connection", "execute_tool edit", "fs/read_text_file", "initialize", "session/new",
		"session/prompt", "session/request_permission", "session/set_mode"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("spans in the file: %q, want %q", got, want)
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		env     map[string]string
		enabled bool
		url     string // the exporter's URL, "" when the endpoint is the environment's
		err     bool
	}{
		{name: "nothing set", enabled: false},
		{name: "flag", cfg: Config{Endpoint: "http://collector:4318"}, enabled: true, url: "http://collector:4318/v1/traces"},
		{name: "flag with a path", cfg: Config{Endpoint: "https://otlp.example/api/"}, enabled: true, url: "https://otlp.example/api/v1/traces"},
		{name: "flag, grpc", cfg: Config{Endpoint: "http://collector:4317", Protocol: "grpc"}, enabled: true, url: "http://collector:4317"},
		{name: "environment", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, enabled: true},
		{name: "traces environment", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, enabled: true},
		{name: "SDK disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, enabled: false},
		{name: "traces exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, enabled: false},
		{name: "protocol from the environment", cfg: Config{Endpoint: "http://c:4317"}, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, enabled: true, url: "http://c:4317"},
		{name: "bad protocol", cfg: Config{Endpoint: "http://c:4318", Protocol: "thrift"}, enabled: true, err: true},
		{name: "not a URL", cfg: Config{Endpoint: "collector:4318"}, enabled: true, err: true},
		{name: "no host", cfg: Config{Endpoint: "http://"}, enabled: true, err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Getenv = func(k string) string { return tc.env[k] }
			if got := cfg.Enabled(); got != tc.enabled {
				t.Fatalf("Enabled() = %v, want %v", got, tc.enabled)
			}
			proto, err := cfg.protocol()
			url := ""
			if err == nil && cfg.Endpoint != "" {
				url, err = cfg.endpointURL(proto)
			}
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want error %v", err, tc.err)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v does not wrap ErrConfig", err)
			}
			if url != tc.url {
				t.Fatalf("URL %q, want %q", url, tc.url)
			}
		})
	}
}

func TestWhereHidesCredentials(t *testing.T) {
	cfg := Config{Endpoint: "https://user:pw@otlp.example:443/v1?token=abc"}
	if got := cfg.Where(); got != "https://otlp.example:443/v1" {
		t.Fatalf("Where() = %q", got)
	}
}
