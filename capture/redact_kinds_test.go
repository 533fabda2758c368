package capture

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// Fake credentials of the right shape; "FAKE" and "EXAMPLE" mark them.
const (
	fakeAnthropic = "sk-ant-api03-FAKEEXAMPLE0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345678-AAAAAA"
	fakeOpenAI    = "sk-proj-FAKEEXAMPLE0123456789abcdefghijklmnopqrstuvwxyzAB"
	fakeGoogle    = "AIzaSyFAKEEXAMPLE0123456789abcdefghi"
	fakeGitHub    = "ghp_FAKEEXAMPLE0123456789abcdefghijklm"
	fakeGitHubPAT = "github_pat_11FAKEEXAMPLE0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW012"
	fakeGitLab    = "glpat-FAKEEXAMPLE0123456789"
	fakeSlack     = "xoxb-1234567890-1234567890123-FAKEEXAMPLEabcdefghij"
	fakeStripe    = "sk_live_FAKEEXAMPLE0123456789abcdef"
	fakeStripeRK  = "rk_test_FAKEEXAMPLE0123456789abcdef"
	fakeAWSID     = "AKIAIOSFODNN7EXAMPLE"                     // AWS's documented example
	fakeAWSSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" // likewise
	fakeAzureKey  = "FAKEEXAMPLEazureKey0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV=="
	fakeJWT       = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFLUVYQU1QTEUifQ.FAKEsignatureEXAMPLE0123456789"
	fakePEMBody   = `MIIEpAIBAAKCAQEAFAKEEXAMPLEkeyMaterial0123456789abcdefghijklmnopq\nFAKEEXAMPLEsecondLine0123456789abcdefghijklmnopqrstuvwxyzABCDEF`
)

// TestRedactShapes puts each token shape in a prompt's text, in stderr
// and in a non-JSON line: only the token changes, and its kind is listed.
func TestRedactShapes(t *testing.T) {
	tests := []struct{ kind, token, want string }{
		{"anthropic key", fakeAnthropic, "<redacted>"},
		{"openai key", fakeOpenAI, "<redacted>"},
		{"google api key", fakeGoogle, "<redacted>"},
		{"github token", fakeGitHub, "<redacted>"},
		{"github token", fakeGitHubPAT, "<redacted>"},
		{"gitlab token", fakeGitLab, "<redacted>"},
		{"slack token", fakeSlack, "<redacted>"},
		{"stripe key", fakeStripe, "<redacted>"},
		{"stripe key", fakeStripeRK, "<redacted>"},
		{"aws access key id", fakeAWSID, "<redacted>"},
		{"aws secret key", fakeAWSID + " " + fakeAWSSecret, "<redacted> <redacted>"},
		{"credential setting", "AccountName=fake;AccountKey=" + fakeAzureKey + ";EndpointSuffix=core.windows.net", "AccountName=fake;AccountKey=<redacted>;EndpointSuffix=core.windows.net"},
		{"credential setting", "https://fake.blob.core.windows.net/c?sv=2022-11-02&sig=FAKEEXAMPLE%2Bsig0123%3D", "https://fake.blob.core.windows.net/c?sv=2022-11-02&sig=<redacted>"},
		{"jwt", fakeJWT, "<redacted>"},
		{"bearer token", "Authorization: Bearer FAKEEXAMPLEopaque0123", "Authorization: Bearer <redacted>"},
		{"basic credentials", "Basic ZmFrZTpFWEFNUExFcGFzcw==", "Basic <redacted>"},
		{"url password", "postgres://admin:FAKEpassEXAMPLE@db.example/app", "postgres://admin:<redacted>@db.example/app"},
		{"credential flag value", "gh-mcp --token FAKEEXAMPLEtok123 --verbose", "gh-mcp --token <redacted> --verbose"},
		{"credential setting", "export DB_PASSWORD=FAKEhunter2EXAMPLE", "export DB_PASSWORD=<redacted>"},
		{"credential setting", `password: "FAKE correct horse EXAMPLE"`, `password: "<redacted>"`},
		{"credential fingerprint", "Bearer <redacted:sha256:8810ad58>", "Bearer <redacted:token#1>"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			r, _ := NewRedactor(RedactOptions{})
			msg := `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"see ` + tt.token + ` now"}]}}`
			want := strings.Replace(msg, tt.token, tt.want, 1)
			if strings.Contains(tt.token, `"`) { // the token is written into JSON escaped
				msg = strings.Replace(msg, tt.token, strings.ReplaceAll(tt.token, `"`, `\"`), 1)
				want = strings.Replace(want, tt.want, strings.ReplaceAll(tt.want, `"`, `\"`), 1)
			}
			out, found := r.Message("session/prompt", []byte(msg))
			if string(out) != want {
				t.Errorf("message\n got  %s\n want %s", out, want)
			}
			if len(found) != 1 || !strings.Contains(found[0].Rule, tt.kind) || found[0].Path != "params.prompt.0.text" {
				t.Errorf("listed %+v, want one %q at params.prompt.0.text", found, tt.kind)
			}
			var rec Record
			rec.Seq, rec.Kind, rec.Body = 9, wire.KindStderr, []byte("agent: "+tt.token)
			if list := r.Record(&rec); string(rec.Body) != "agent: "+tt.want || len(list) != 1 || list[0].Seq != 9 {
				t.Errorf("stderr %q, listed %+v", rec.Body, list)
			}
		})
	}
}

// TestRedactPlaces puts secrets where the issue found them and where ACP
// messages carry them in any form.
func TestRedactPlaces(t *testing.T) {
	tests := []struct {
		name, method, in, want string
		paths                  []string
	}{
		{
			name:   "tool call rawInput keys",
			method: "session/update",
			in:     `{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","rawInput":{"url":"https://api.example","api_key":"FAKE-key-EXAMPLE-1","password":"FAKE-pw-EXAMPLE-2","limit":5}}}}`,
			want:   `{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","rawInput":{"url":"https://api.example","api_key":"<redacted>","password":"<redacted>","limit":5}}}}`,
			paths:  []string{"params.update.rawInput.api_key", "params.update.rawInput.password"},
		},
		{
			name:   "terminal/create env: credential names only",
			method: "terminal/create",
			in:     `{"id":7,"method":"terminal/create","params":{"command":"psql","args":["-p","5432"],"env":[{"name":"PATH","value":"/usr/bin"},{"value":"FAKEdbEXAMPLEpass","name":"DB_PASSWORD"},{"name":"PWD","value":"/home/ann"}]}}`,
			want:   `{"id":7,"method":"terminal/create","params":{"command":"psql","args":["-p","5432"],"env":[{"name":"PATH","value":"/usr/bin"},{"value":"<redacted>","name":"DB_PASSWORD"},{"name":"PWD","value":"/home/ann"}]}}`,
			paths:  []string{"params.env.1.value"},
		},
		{
			name:   "PEM private key in fs/write_text_file content",
			method: "fs/write_text_file",
			in:     `{"id":8,"method":"fs/write_text_file","params":{"path":"/w/id_rsa","content":"-----BEGIN RSA PRIVATE KEY-----\n` + fakePEMBody + `\n-----END RSA PRIVATE KEY-----\n"}}`,
			want:   `{"id":8,"method":"fs/write_text_file","params":{"path":"/w/id_rsa","content":"-----BEGIN RSA PRIVATE KEY-----<redacted>-----END RSA PRIVATE KEY-----\n"}}`,
			paths:  []string{"params.content"},
		},
		{
			name:   "a key file inside a JSON file inside a message",
			method: "fs/write_text_file",
			in:     `{"id":8,"method":"fs/write_text_file","params":{"content":"{\"type\":\"service_account\",\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nFAKEEXAMPLE0123\\n-----END PRIVATE KEY-----\\n\",\"client_email\":\"a@b\"}"}}`,
			want:   `{"id":8,"method":"fs/write_text_file","params":{"content":"{\"type\":\"service_account\",\"private_key\":\"<redacted>\",\"client_email\":\"a@b\"}"}}`,
			paths:  []string{"params.content"},
		},
		{
			name:   "URL userinfo password in any string",
			method: "session/update",
			in:     `{"method":"session/update","params":{"update":{"content":[{"type":"text","text":"connect to https://admin:FAKEpassEXAMPLE@db.example/ then"}]}}}`,
			want:   `{"method":"session/update","params":{"update":{"content":[{"type":"text","text":"connect to https://admin:<redacted>@db.example/ then"}]}}}`,
			paths:  []string{"params.update.content.0.text"},
		},
		{
			name:   "mcpServers args --token VALUE and --api-key=VALUE",
			method: "session/new",
			in:     `{"id":2,"method":"session/new","params":{"mcpServers":[{"name":"gh","command":"npx","args":["-y","server","--token","FAKEtokEXAMPLE1","--api-key=FAKEkeyEXAMPLE2","--port","8080"],"env":[]}]}}`,
			want:   `{"id":2,"method":"session/new","params":{"mcpServers":[{"name":"gh","command":"npx","args":["-y","server","--token","<redacted>","--api-key=<redacted>","--port","8080"],"env":[]}]}}`,
			paths:  []string{"params.mcpServers.0.args.3", "params.mcpServers.0.args.4"},
		},
		{
			name:   "short flags only for the tools that document them",
			method: "terminal/create",
			in:     `{"id":3,"method":"terminal/create","params":{"command":"/usr/bin/sshpass","args":["-p","FAKEsshEXAMPLE","ssh","-p","22","host","mysql","-pFAKEmyEXAMPLE","curl","-u","ann:FAKEcurlEXAMPLE","docker","run","-p","80:80","docker","login","-p","FAKEdockerEXAMPLE"]}}`,
			want:   `{"id":3,"method":"terminal/create","params":{"command":"/usr/bin/sshpass","args":["-p","<redacted>","ssh","-p","22","host","mysql","-p<redacted>","curl","-u","ann:<redacted>","docker","run","-p","80:80","docker","login","-p","<redacted>"]}}`,
			paths:  []string{"params.args.1", "params.args.7", "params.args.10", "params.args.18"},
		},
		{
			name:   "a command line written as one string",
			method: "terminal/create",
			in:     `{"id":3,"method":"terminal/create","params":{"command":"bash","args":["-c","mysql -uroot -pFAKEmyEXAMPLE app \u0026\u0026 curl -u 'admin:FAKEcurlEXAMPLE' https://h; sshpass -p FAKEsshEXAMPLE ssh -p 2222 h"]}}`,
			want:   `{"id":3,"method":"terminal/create","params":{"command":"bash","args":["-c","mysql -uroot -p<redacted> app \u0026\u0026 curl -u 'admin:<redacted>' https://h; sshpass -p <redacted> ssh -p 2222 h"]}}`,
			paths:  []string{"params.args.1"},
		},
		{
			name:   "mcpServers in any message, object forms, http headers arrays",
			method: "_zed/config",
			in:     `{"id":1,"method":"_zed/config","params":{"mcpServers":{"gh":{"command":"x","env":{"ANY":"FAKEenvEXAMPLE"}},"web":{"url":"https://m","headers":[{"name":"X-Custom","value":"FAKEhdrEXAMPLE"}]}}}}`,
			want:   `{"id":1,"method":"_zed/config","params":{"mcpServers":{"gh":{"command":"x","env":{"ANY":"<redacted>"}},"web":{"url":"https://m","headers":[{"name":"X-Custom","value":"<redacted>"}]}}}}`,
			paths:  []string{"params.mcpServers.gh.env.ANY", "params.mcpServers.web.headers.0.value"},
		},
		{
			name:   "errors and results",
			method: "session/prompt",
			in:     `{"id":4,"error":{"code":-32000,"message":"upstream said: invalid x-api-key ` + fakeAnthropic + `","data":{"request":{"headers":{"authorization":"Bearer FAKEbearerEXAMPLE1"}}}}}`,
			want:   `{"id":4,"error":{"code":-32000,"message":"upstream said: invalid x-api-key <redacted>","data":{"request":{"headers":{"authorization":"<redacted>"}}}}}`,
			paths:  []string{"error.message", "error.data.request.headers.authorization"},
		},
		{
			name:   "a secret used as an object key",
			method: "session/update",
			in:     `{"method":"session/update","params":{"_meta":{"seen":{"` + fakeGitHub + `":true}}}}`,
			want:   `{"method":"session/update","params":{"_meta":{"seen":{"<redacted>":true}}}}`,
			paths:  []string{"params._meta.seen.<redacted>"},
		},
		{
			name:   "secrets hidden by escapes are found decoded",
			method: "session/update",
			in:     `{"method":"session/update","params":{"text":"\u0067hp_FAKEEXAMPLE0123456789abcdefghijklm","url":"https:\/\/u:FAKEpwEXAMPLE@h\/"}}`,
			want:   `{"method":"session/update","params":{"text":"<redacted>","url":"<redacted>"}}`,
			paths:  []string{"params.text", "params.url"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := NewRedactor(RedactOptions{})
			out, found := r.Message(tt.method, []byte(tt.in))
			if string(out) != tt.want {
				t.Errorf("redacted\n got  %s\n want %s", out, tt.want)
			}
			if !json.Valid(out) {
				t.Errorf("not JSON any more: %s", out)
			}
			var paths []string
			for _, f := range found {
				paths = append(paths, f.Path)
				if strings.Contains(f.Path+f.Rule, "FAKE") {
					t.Errorf("the list of redactions names a secret: %+v", f)
				}
			}
			if strings.Join(paths, " ") != strings.Join(tt.paths, " ") {
				t.Errorf("listed %q, want %q (%+v)", paths, tt.paths, found)
			}
		})
	}
}

// TestRedactKeeps: what looks a little like a secret and is not stays.
func TestRedactKeeps(t *testing.T) {
	for _, msg := range []string{
		`{"result":{"authMethods":[{"id":"oauth","name":"Log in","description":"token-based"}],"agentCapabilities":{"auth":{"terminal":true}}}}`,
		`{"params":{"usage":{"maxTokens":"4096","token_count":"12345678","inputTokens":7},"tokenizer":"cl100k_base"}}`,
		`{"params":{"text":"the key idea: task-list-abcdefghijk, a secretary's desk, https://example.com:8080/x?page=2"}}`,
		`{"params":{"content":"-----BEGIN CERTIFICATE-----\nMIIBfakeEXAMPLE\n-----END CERTIFICATE-----\n"}}`,
		`{"params":{"command":"psql","args":["-h","db","-p","5432","-U","ann"],"env":[{"name":"PATH","value":"/usr/bin"}]}}`,
		`{"params":{"password_file":"/run/secrets/db","api_key_env":"OPENAI_API_KEY","token_type":"refresh","authMethodId":"pw"}}`,
		`{"params":{"text":"use --token-file /tmp/t and set the password: in the dialog"}}`,
	} {
		r, _ := NewRedactor(RedactOptions{})
		if out, found := r.Message("x", []byte(msg)); string(out) != msg {
			t.Errorf("changed a message without secrets:\n in  %s\n out %s\n %+v", msg, out, found)
		}
	}
}

func TestCredentialName(t *testing.T) {
	yes := []string{"password", "DB_PASSWORD", "PGPASSWORD", "dbPassword", "api_key", "apiKey", "APIKey", "x-api-key",
		"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "client_secret", "accessToken", "refresh_token", "GITHUB_TOKEN",
		"xsrftoken", "Authorization", "Proxy-Authorization", "Cookie", "AccountKey", "SharedAccessKey", "sig",
		"X-Amz-Signature", "basicAuth", "GITHUB_PAT", "MYSQL_PWD", "passphrase", "credentials", "--auth-token", "private_key"}
	no := []string{"name", "value", "PWD", "PATH", "HOME", "authMethods", "authMethodId", "maxTokens", "token_count",
		"token_type", "tokenizer", "publicKey", "keyId", "password_file", "api_key_env", "AWS_ACCESS_KEY_ID", "methodId",
		"sessionId", "key", "monkey", "signature", "author", "tokens", "cwd"}
	for _, n := range yes {
		if !credentialName(n) {
			t.Errorf("credentialName(%q) = false, want true", n)
		}
	}
	for _, n := range no {
		if credentialName(n) {
			t.Errorf("credentialName(%q) = true, want false", n)
		}
	}
}

// TestRedactStderrKeyBlock: a private key printed to stderr comes one line
// per record; every line of it is redacted, and only those.
func TestRedactStderrKeyBlock(t *testing.T) {
	r, _ := NewRedactor(RedactOptions{})
	lines := []struct{ in, want string }{
		{"loading key", "loading key"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----"},
		{"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUFAKEEXAMPLE", "<redacted>"},
		{"AAAAC3NzaC1lZDI1NTE5AAAAIFAKEEXAMPLEkeyline", "<redacted>"},
		{"-----END OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----"},
		{"done", "done"},
	}
	for i, l := range lines {
		var rec Record
		rec.Seq, rec.Kind, rec.Conn, rec.Body = uint64(i+1), wire.KindStderr, 0, []byte(l.in)
		r.Record(&rec)
		if string(rec.Body) != l.want {
			t.Errorf("line %d: %q, want %q", i+1, rec.Body, l.want)
		}
	}
}

// TestEnvelopeLabels: fingerprints become labels numbered per export,
// old unkeyed ones too; a credential header without one is redacted
// whole; other headers are read as text.
func TestEnvelopeLabels(t *testing.T) {
	r, _ := NewRedactor(RedactOptions{})
	env := func(h map[string]string) *wire.Envelope {
		return &wire.Envelope{Method: "POST", Path: "/acp", Headers: h}
	}
	tests := []struct {
		in   map[string]string
		want map[string]string
	}{
		{map[string]string{"authorization": "Bearer <redacted:hmac:0a1b2c3d4e5f>", "cookie": "sid=<redacted:hmac:111111111111>; theme=<redacted:hmac:0a1b2c3d4e5f>"},
			map[string]string{"authorization": "Bearer <redacted:token#1>", "cookie": "sid=<redacted:token#2>; theme=<redacted:token#1>"}},
		{map[string]string{"authorization": "Bearer <redacted:sha256:8810ad58>", "set-cookie": "a=<redacted:hmac:111111111111>; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT"},
			map[string]string{"authorization": "Bearer <redacted:token#3>", "set-cookie": "a=<redacted:token#2>; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT"}},
		{map[string]string{"x-api-key": "FAKEEXAMPLE", "x-auth-token": "short", "cookie": "a=<redacted:hmac:111111111111>; b=FAKEEXAMPLEraw0123456789", "location": "https://u:FAKEpwEXAMPLE@h/", "acp-session-id": "s1"},
			map[string]string{"x-api-key": Redacted, "x-auth-token": Redacted, "cookie": Redacted, "location": "https://u:<redacted>@h/", "acp-session-id": "s1"}},
	}
	for i, tt := range tests {
		got, found := r.Envelope(env(tt.in))
		for k, v := range tt.want {
			if got.Headers[k] != v {
				t.Errorf("case %d: %s = %q, want %q", i, k, got.Headers[k], v)
			}
		}
		if len(found) == 0 {
			t.Errorf("case %d: nothing listed", i)
		}
	}
	var rec Record
	rec.HTTP = env(map[string]string{"authorization": "Bearer <redacted:sha256:8810ad58>", "accept": "text/event-stream"})
	r2, _ := NewRedactor(RedactOptions{})
	r2.Relabel(&rec)
	if rec.HTTP.Headers["authorization"] != "Bearer <redacted:token#1>" || rec.HTTP.Headers["accept"] != "text/event-stream" {
		t.Errorf("relabelled %v", rec.HTTP.Headers)
	}
}

func TestRedactArgv(t *testing.T) {
	r, _ := NewRedactor(RedactOptions{})
	in := []string{"acpscope", "serve", "--auth-token", "FAKEtokenEXAMPLE", "--upstream", "https://u:FAKEpwEXAMPLE@h/acp", "--", "agent", "-password=FAKEpwEXAMPLE2"}
	want := []string{"acpscope", "serve", "--auth-token", Redacted, "--upstream", "https://u:<redacted>@h/acp", "--", "agent", "-password=" + Redacted}
	out, found := r.Argv(in)
	if strings.Join(out, " ") != strings.Join(want, " ") {
		t.Errorf("argv\n got  %q\n want %q", out, want)
	}
	if len(found) != 3 || found[0].Path != "argv.3" {
		t.Errorf("listed %+v", found)
	}
}

// TestRedactRecordFields: fields JSONL writes beside the body (the
// session, the envelope's ids) are read as text too.
func TestRedactRecordFields(t *testing.T) {
	r, _ := NewRedactor(RedactOptions{})
	var rec Record
	rec.Seq, rec.Kind, rec.Session = 3, wire.KindNotification, fakeJWT
	rec.Body = []byte(`{"method":"x","params":{}}`)
	rec.HTTP = &wire.Envelope{Path: "/acp", ConnectionID: fakeJWT, SessionID: "s1"}
	found := r.Record(&rec)
	if rec.Session != Redacted || rec.HTTP.ConnectionID != Redacted || rec.HTTP.SessionID != "s1" {
		t.Errorf("session %q, envelope %+v", rec.Session, rec.HTTP)
	}
	if len(found) != 2 {
		t.Errorf("listed %+v, want the session and the connection id", found)
	}
}
