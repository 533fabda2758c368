package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

func TestRedactMessage(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		in      string
		want    string
		secrets []string // must not survive
		paths   []string // redaction paths reported
	}{
		{
			name:    "authenticate params keep methodId",
			method:  "authenticate",
			in:      `{"jsonrpc":"2.0","id":3,"method":"authenticate","params":{"methodId":"api-key","apiKey":"s3cr3t-value",  "extra":{"pin":"1234"},"n":5}}`,
			want:    `{"jsonrpc":"2.0","id":3,"method":"authenticate","params":{"methodId":"api-key","apiKey":"<redacted>",  "extra":{"pin":"<redacted>"},"n":5}}`,
			secrets: []string{"s3cr3t-value", "1234"},
			paths:   []string{"params.apiKey", "params.extra.pin"},
		},
		{
			name:    "mcpServers env array form and headers",
			method:  "session/new",
			in:      `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"gh","command":"/bin/mcp","args":["-v"],"env":[{"name":"GITHUB_TOKEN","value":"tok-abcdef"}]},{"type":"http","name":"h","url":"http://x","headers":[{"name":"X-Key","value":"hv-123456"}]}]}}`,
			want:    `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"gh","command":"/bin/mcp","args":["-v"],"env":[{"name":"GITHUB_TOKEN","value":"<redacted>"}]},{"type":"http","name":"h","url":"http://x","headers":[{"name":"X-Key","value":"<redacted>"}]}]}}`,
			secrets: []string{"tok-abcdef", "hv-123456"},
			paths:   []string{"params.mcpServers.0.env.0.value", "params.mcpServers.1.headers.0.value"},
		},
		{
			name:    "mcpServers env object form in session/load",
			method:  "session/load",
			in:      `{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","mcpServers":[{"name":"a","env":{"OPENAI_API_KEY":"abc\"def"}}]}}`,
			want:    `{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","mcpServers":[{"name":"a","env":{"OPENAI_API_KEY":"<redacted>"}}]}}`,
			secrets: []string{`abc\"def`},
			paths:   []string{"params.mcpServers.0.env.OPENAI_API_KEY"},
		},
		{
			name:    "_meta credential keys at any depth, booleans kept",
			method:  "initialize",
			in:      "{\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{\"auth\":{\"_meta\":{\"gateway\":true}},\"_meta\":{\"terminal-auth\":true}},\"_meta\":{\"proxyConfig\":{\"proxies\":[{\"proxy\":{\"url\":\"http://127.0.0.1:5\",\"headers\":{\"proxy_key\":\"pk-999999\"}}}]},\"SessionToken\" : \"st-1\"}},\"jsonrpc\":\"2.0\"}",
			want:    "{\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{\"auth\":{\"_meta\":{\"gateway\":true}},\"_meta\":{\"terminal-auth\":true}},\"_meta\":{\"proxyConfig\":{\"proxies\":[{\"proxy\":{\"url\":\"http://127.0.0.1:5\",\"headers\":{\"proxy_key\":\"<redacted>\"}}}]},\"SessionToken\" : \"<redacted>\"}},\"jsonrpc\":\"2.0\"}",
			secrets: []string{"pk-999999", "st-1"},
			paths:   []string{"params._meta.proxyConfig.proxies.0.proxy.headers.proxy_key", "params._meta.SessionToken"},
		},
		{
			name:    "headers under _meta whatever their names",
			method:  "initialize",
			in:      `{"id":1,"method":"initialize","params":{"_meta":{"proxyConfig":{"proxies":[{"proxy":{"url":"http://127.0.0.1:1","headers":{"x-gw":"gwv-1","n":2}}}]}}}}`,
			want:    `{"id":1,"method":"initialize","params":{"_meta":{"proxyConfig":{"proxies":[{"proxy":{"url":"http://127.0.0.1:1","headers":{"x-gw":"<redacted>","n":2}}}]}}}}`,
			secrets: []string{"gwv-1"},
			paths:   []string{"params._meta.proxyConfig.proxies.0.proxy.headers.x-gw"},
		},
		{
			name:    "JetBrains gateway token in initialize _meta",
			method:  "initialize",
			in:      `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"_meta":{"jetbrains.gateway":{"url":"wss://gw","ticket":"gw-abcdef"}}}}`,
			want:    `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"_meta":{"jetbrains.gateway":{"url":"<redacted>","ticket":"<redacted>"}}}}`,
			secrets: []string{"gw-abcdef"},
			paths:   []string{"params._meta.jetbrains.gateway.url", "params._meta.jetbrains.gateway.ticket"},
		},
		{
			name:    "token patterns in free text values",
			method:  "session/prompt",
			in:      `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"use sk-proj-ABCDEFGH1234 and Bearer eyJhbGciOi.x.y please"}]}}`,
			want:    `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"use <redacted> and Bearer <redacted> please"}]}}`,
			secrets: []string{"sk-proj-ABCDEFGH1234", "eyJhbGciOi"},
			paths:   []string{"params.prompt.0.text"},
		},
		{
			name:   "nothing secret: bytes unchanged",
			method: "session/update",
			in:     `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the key idea"}}}}`,
			want:   `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the key idea"}}}}`,
		},
		{
			name:    "authenticate response is not secret",
			method:  "authenticate",
			in:      `{"jsonrpc":"2.0","id":3,"result":{"_meta":{"accessToken":"at-777777"},"ok":"yes"}}`,
			want:    `{"jsonrpc":"2.0","id":3,"result":{"_meta":{"accessToken":"<redacted>"},"ok":"yes"}}`,
			secrets: []string{"at-777777"},
			paths:   []string{"result._meta.accessToken"},
		},
		{
			name:    "batch members use their own method",
			method:  "",
			in:      `[{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"m","pin":"pw-hunter2","user":"ann"}},{"jsonrpc":"2.0","id":2,"method":"session/list","params":{"user":"plain"}}]`,
			want:    `[{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"m","pin":"<redacted>","user":"<redacted>"}},{"jsonrpc":"2.0","id":2,"method":"session/list","params":{"user":"plain"}}]`,
			secrets: []string{"pw-hunter2"},
			paths:   []string{"0.params.pin", "0.params.user"},
		},
		{
			name:    "non-JSON line gets text patterns",
			in:      `token=abcdef123456 started`,
			want:    `token=<redacted> started`,
			secrets: []string{"abcdef123456"},
			paths:   []string{"(text)"},
		},
	}
	r, err := NewRedactor(RedactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, found := r.Message(tt.method, []byte(tt.in))
			if string(out) != tt.want {
				t.Errorf("redacted\n got  %s\n want %s", out, tt.want)
			}
			for _, s := range tt.secrets {
				if bytes.Contains(out, []byte(s)) {
					t.Errorf("secret %q survived: %s", s, out)
				}
			}
			var paths []string
			for _, f := range found {
				paths = append(paths, f.Path)
				for _, s := range tt.secrets {
					if strings.Contains(f.Path+f.Rule, s) {
						t.Errorf("report leaks secret %q: %+v", s, f)
					}
				}
			}
			if strings.Join(paths, " ") != strings.Join(tt.paths, " ") {
				t.Errorf("reported paths %q, want %q", paths, tt.paths)
			}
		})
	}
}

func TestRedactOptions(t *testing.T) {
	r, err := NewRedactor(RedactOptions{
		Paths:    []string{"params.prompt[*].text", "params.cwd", "params.limit"},
		Patterns: []string{`acct-[0-9]+`},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"id":1,"method":"x","params":{"cwd":"/home/ann","limit":7,"prompt":[{"type":"text","text":"hi"}],"note":"acct-42 done"}}`
	want := `{"id":1,"method":"x","params":{"cwd":"<redacted>","limit":"<redacted>","prompt":[{"type":"text","text":"<redacted>"}],"note":"<redacted> done"}}`
	out, found := r.Message("x", []byte(in))
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if len(found) != 4 {
		t.Errorf("found %d redactions, want 4: %+v", len(found), found)
	}
	if _, err := NewRedactor(RedactOptions{Patterns: []string{"("}}); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

func TestRedactRecord(t *testing.T) {
	r, _ := NewRedactor(RedactOptions{})
	tests := []struct {
		name string
		rec  Record
		want string
		n    int
	}{
		{"stderr bearer", Record{Msg: protocol.Msg{Seq: 7, Kind: wire.KindStderr, Body: []byte(`DEBUG Authorization: Bearer abcdefghijkl`)}}, `DEBUG Authorization: Bearer <redacted>`, 1},
		{"stderr github token", Record{Msg: protocol.Msg{Seq: 8, Kind: wire.KindStderr, Body: []byte(`using ghp_abcdefghijklmnopqrstuv now`)}}, `using <redacted> now`, 1},
		{"stderr plain", Record{Msg: protocol.Msg{Seq: 9, Kind: wire.KindStderr, Body: []byte(`listening on 127.0.0.1`)}}, `listening on 127.0.0.1`, 0},
		{"http headers", Record{Msg: protocol.Msg{Seq: 10, Kind: wire.KindRequest, Method: "session/new", Body: []byte(`{"id":1,"method":"session/new","params":{}}`), HTTP: &wire.Envelope{Method: "POST", Headers: map[string]string{"Authorization": "Bearer x", "Cookie": "a=b", "Acp-Session-Id": "s"}}}},
			`{"id":1,"method":"session/new","params":{}}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tt.rec
			orig := rec.HTTP
			found := r.Record(&rec)
			if string(rec.Body) != tt.want {
				t.Errorf("body %q, want %q", rec.Body, tt.want)
			}
			if len(found) != tt.n {
				t.Errorf("%d redactions, want %d: %+v", len(found), tt.n, found)
			}
			for _, f := range found {
				if f.Seq != tt.rec.Seq {
					t.Errorf("redaction seq %d, want %d", f.Seq, tt.rec.Seq)
				}
			}
			if rec.HTTP != nil {
				if rec.HTTP.Headers["Authorization"] != Redacted || rec.HTTP.Headers["Cookie"] != Redacted {
					t.Errorf("headers not redacted: %v", rec.HTTP.Headers)
				}
				if rec.HTTP.Headers["Acp-Session-Id"] != "s" {
					t.Errorf("routing header changed: %v", rec.HTTP.Headers)
				}
				if orig.Headers["Cookie"] != "a=b" {
					t.Error("the original envelope was modified")
				}
			}
		})
	}
}

func TestMatchPath(t *testing.T) {
	tests := []struct {
		pat  string
		path string
		want bool
	}{
		{"result.stopReason", "result.stopReason", true},
		{"result.*", "result.stopReason", true},
		{"result.*", "result.a.b", false},
		{"**._meta", "params.update._meta", true},
		{"**._meta.**", "params._meta.x.y", true},
		{"params.prompt[0].text", "params.prompt.0.text", true},
		{"*Token", "accessToken", true},
		{"a*c*e", "abcde", true},
		{"a*c*e", "abcd", false},
		{"id", "params.id", false},
		{"**", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.pat+"~"+tt.path, func(t *testing.T) {
			var path []string
			if tt.path != "" {
				path = strings.Split(tt.path, ".")
			}
			if got := MatchPath(tt.pat, path); got != tt.want {
				t.Errorf("MatchPath(%q, %q) = %v, want %v", tt.pat, tt.path, got, tt.want)
			}
		})
	}
}

// FuzzRedactSpans checks the span editing on arbitrary JSON: the output is
// valid JSON, and outside the redacted values every byte is unchanged.
func FuzzRedactSpans(f *testing.F) {
	f.Add([]byte(`{"method":"authenticate","params":{"methodId":"m","k":"v\"w"}}`), "authenticate")
	f.Add([]byte(`[{"params":{"mcpServers":[{"env":{"A":"b"}}]}}, 1, "x"]`), "session/new")
	f.Add([]byte(`{"_meta":{"token":["a",{"b":"c"}],"x":"sk-1234567890"}}`), "")
	f.Add([]byte(` "Bearer abcdefghijk" `), "")
	r, _ := NewRedactor(RedactOptions{Paths: []string{"**.secret"}})
	f.Fuzz(func(t *testing.T, in []byte, method string) {
		if !json.Valid(in) {
			return
		}
		out, found := r.Message(method, in)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON after redaction: %q -> %q", in, out)
		}
		if len(found) == 0 && !bytes.Equal(out, in) {
			t.Fatalf("nothing reported but bytes changed: %q -> %q", in, out)
		}
		// Removing every string literal from both sides must leave the
		// same skeleton: only string values were replaced (and keys
		// that hold a secret).
		if skeleton(in) != skeleton(out) && !strings.Contains(fmt.Sprint(found), "object key") {
			t.Fatalf("structure changed: %q -> %q", in, out)
		}
	})
}

// skeleton replaces each string value (not key) with "" and each redacted
// scalar with "", keeping every other byte.
func skeleton(doc []byte) string {
	var edits []Edit
	_ = WalkJSON(doc, func(path []string, start, end int) bool {
		switch doc[start] {
		case '{', '[':
			return true
		}
		edits = append(edits, Edit{start, end, []byte(`""`)})
		return true
	})
	return string(ApplyEdits(doc, edits))
}
