package capture

import (
	"strings"
	"testing"
)

// TestRedactInsideChainWrappers: the secrets ACP puts in session/new and
// authenticate are redacted when a proxy chain carries those messages,
// one or two hops deep, and the wrapper itself stays readable.
func TestRedactInsideChainWrappers(t *testing.T) {
	tests := []struct {
		name, method, body string
		gone, kept         []string
	}{
		{"session/new at hop 1", "session/new",
			`{"jsonrpc":"2.0","id":1,"method":"_proxy/successor/request","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"gh","command":"gh-mcp","env":[{"name":"GH_TOKEN","value":"ghp_hunter2"}]}]}}}`,
			[]string{"ghp_hunter2"}, []string{`"method":"_proxy/successor/request"`, `"method":"session/new"`, `"name":"GH_TOKEN"`, `"cwd":"/w"`}},
		{"session/new at hop 2", "session/new",
			`{"jsonrpc":"2.0","id":1,"method":"_proxy/successor","params":{"method":"_proxy/successor/request","params":{"method":"session/new","params":{"mcpServers":[{"name":"x","url":"https://x","headers":[{"name":"Authorization","value":"Bearer sekrit"}]}]}}}}`,
			[]string{"sekrit"}, []string{`"method":"session/new"`, `"url":"https://x"`}},
		{"authenticate at hop 1", "authenticate",
			`{"jsonrpc":"2.0","id":2,"method":"_proxy/successor/request","params":{"method":"authenticate","params":{"methodId":"key","apiKey":"sk-live-123"}}}`,
			[]string{"sk-live-123"}, []string{`"method":"authenticate"`, `"methodId":"key"`}},
	}
	r, err := NewRedactor(RedactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, found := r.Message(tt.method, []byte(tt.body))
			for _, s := range tt.gone {
				if strings.Contains(string(out), s) {
					t.Errorf("%q survived redaction: %s", s, out)
				}
			}
			for _, s := range tt.kept {
				if !strings.Contains(string(out), s) {
					t.Errorf("%q was redacted: %s", s, out)
				}
			}
			if len(found) == 0 || !strings.HasPrefix(found[0].Path, "params.params") {
				t.Errorf("redactions %+v, want their paths inside the wrapper", found)
			}
		})
	}
}
