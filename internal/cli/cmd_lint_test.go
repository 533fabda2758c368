package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/proxy"
)

// TestLintCommand imports a real acp-devtools export into a capture and
// lints it end to end: records read back with their bytes, converted,
// linted, filtered and printed.
func TestLintCommand(t *testing.T) {
	src := filepath.Join("..", "..", "..", "shared", "fixtures", "acp-devtools-handshakes", "gemini-cli-0.46.0.json")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("fixture absent (it lives in ../../../shared/fixtures beside the repository): %v", err)
	}
	path := filepath.Join(t.TempDir(), "gemini.acpscope")
	importCapture(t, src, path)
	tests := []struct {
		name      string
		flags     lintFlags
		wantCode  int
		wantRules []string
	}{
		{"all", lintFlags{format: "json", noSave: true}, 1, []string{"acp/not-initialized", "acp/session-not-ready"}},
		{"warnings only", lintFlags{format: "json", noSave: true, min: protocol.Warning}, 1, []string{"acp/not-initialized", "acp/session-not-ready"}},
		{"errors only", lintFlags{format: "json", noSave: true, min: protocol.Error}, 1, []string{"acp/session-not-ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code, err := lintCapture(&out, &errOut, path, tt.flags, nil)
			if err != nil || code != tt.wantCode {
				t.Fatalf("code %d err %v, want %d; stderr %s", code, err, tt.wantCode, errOut.String())
			}
			var got []protocol.Finding
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("json output: %v\n%s", err, out.String())
			}
			rules := map[string]bool{}
			for _, f := range got {
				rules[f.Rule] = true
			}
			if len(rules) != len(tt.wantRules) {
				t.Errorf("rules %v, want %v", rules, tt.wantRules)
			}
			for _, r := range tt.wantRules {
				if !rules[r] {
					t.Errorf("missing %s in %v", r, rules)
				}
			}
		})
	}
	// A session the capture does not have is a mistake, not a clean bill.
	var out bytes.Buffer
	if code, err := lintCapture(&out, &out, path, lintFlags{format: "json", noSave: true, session: "nope"}, nil); code != 2 ||
		err == nil || !strings.Contains(err.Error(), `no session "nope" in the capture (sessions: `) {
		t.Errorf("--session nope: exit %d, %v; want 2 and the sessions there are", code, err)
	}
	out.Reset()
	if _, err := lintCapture(&out, &out, path, lintFlags{format: "text", noSave: true}, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("ERROR   acp/session-not-ready seq=")) || !bytes.Contains(out.Bytes(), []byte("(ACP session setup)")) {
		t.Errorf("text output:\n%s", out.String())
	}
}

func TestLintCommandUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	empty := t.TempDir()
	for _, args := range [][]string{
		{"lint", "--dir", empty},
		{"lint", "--dir", empty, "nope"},
		{"lint", "--dir", empty, "a", "b"},
		{"lint", "--format", "xml", "x"},
		{"lint", "--min-severity", "loud", "x"},
	} {
		out.Reset()
		errOut.Reset()
		if code := Main(args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %s)", args, code, errOut.String())
		}
	}
}

// importCapture imports src into dst.
func importCapture(t *testing.T, src, dst string) {
	t.Helper()
	if _, err := capture.Import(src, dst); err != nil {
		t.Fatal(err)
	}
}

// TestLintHTTPCapture records a Streamable HTTP exchange through the real
// recording proxy, once against a server that follows the RFD and once
// against one that does not, and lints both captures: the HTTP rules must
// read the envelopes the proxy really writes.
func TestLintHTTPCapture(t *testing.T) {
	tests := []struct {
		name      string
		compliant bool
		http1     bool
		want      []string
	}{
		{"rfd server", true, false, nil},
		{"sloppy server", false, false, []string{"http/content-type", "http/post-status"}},
		{"rfd server over HTTP/1.1", true, true, []string{"http/http2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := recordHTTP(t, tt.compliant, tt.http1)
			var out, errOut bytes.Buffer
			if _, err := lintCapture(&out, &errOut, path, lintFlags{format: "json", noSave: true}, nil); err != nil {
				t.Fatal(err)
			}
			var got []protocol.Finding
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, f := range got {
				rules = append(rules, f.Rule)
			}
			if strings.Join(rules, " ") != strings.Join(tt.want, " ") {
				t.Errorf("rules %v, want %v\n%s", rules, tt.want, out.String())
			}
		})
	}
}

// recordHTTP runs initialize, a mistyped POST, session/new and the
// connection's SSE stream through the recording proxy into a capture,
// over cleartext HTTP/2 as the RFD requires, or over HTTP/1.1.
func recordHTTP(t *testing.T, compliant, http1 bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "http.acpscope")
	w := createCapture(t, path)
	up := newH2CServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodGet:
			rw.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(rw, "data: %s\n\n", `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`)
		case strings.Contains(string(body), `"initialize"`):
			rw.Header().Set("Content-Type", "application/json")
			rw.Header().Set("Acp-Connection-Id", "c1")
			fmt.Fprint(rw, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}`)
		case r.Header.Get("Content-Type") != "application/json" && compliant:
			rw.WriteHeader(http.StatusUnsupportedMediaType)
		case strings.Contains(string(body), `"session/new"`) && !compliant:
			rw.WriteHeader(http.StatusOK)
		default:
			rw.WriteHeader(http.StatusAccepted)
		}
	}))
	defer up.Close()
	p, err := proxy.NewHTTPProxy(proxy.HTTPProxyOptions{Upstream: up.URL + "/acp", Recorder: w})
	if err != nil {
		t.Fatal(err)
	}
	front := newH2CServer(p)
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(!http1)
	protos.SetHTTP1(http1)
	client := &http.Client{Transport: &http.Transport{Protocols: &protos}}
	defer client.CloseIdleConnections()
	send := func(method, body, contentType string) {
		req, _ := http.NewRequest(method, front.URL+"/acp", strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if !strings.Contains(body, `"initialize"`) {
			req.Header.Set("Acp-Connection-Id", "c1")
		}
		if method == http.MethodGet {
			req.Header.Set("Accept", "text/event-stream")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	send(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, "application/json")
	send(http.MethodPost, `{"jsonrpc":"2.0","method":"_x/ping"}`, "text/plain")
	send(http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`, "application/json")
	send(http.MethodGet, "", "")
	p.Close()
	front.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// newH2CServer starts a loopback test server that speaks HTTP/1.1 and
// cleartext HTTP/2 with prior knowledge.
func newH2CServer(h http.Handler) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	s.Config.Protocols = &p
	s.Start()
	return s
}

// createCapture makes a capture writer for an HTTP capture.
func createCapture(t *testing.T, path string) *capture.Writer {
	t.Helper()
	w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true, Meta: capture.Meta{Transport: "http"}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}
