package leakcheck

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// Corpus is a capture with planted secrets.
type Corpus struct {
	Path    string // the capture file
	Session string // the session every export of it selects
	Secrets []Secret
}

// planter records secrets as the corpus plants them.
type planter struct {
	f       *faker
	secrets []Secret
}

// plant records s as a secret of kind planted in place and returns it.
func (p *planter) plant(kind, place string, s shaped) string {
	p.secrets = append(p.secrets, Secret{Kind: kind, Place: place, Value: s.value, core: s.core})
	return s.value
}

// js is s as it stands inside a JSON string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// line is one message or text line of the corpus.
type line struct {
	conn   uint32
	stream capture.Stream // stdio (conn 0)
	dir    wire.Dir       // HTTP (conn > 0)
	env    *wire.Envelope // HTTP (conn > 0)
	text   string
}

const corpusSession = "sess_leak"

// Build writes the corpus capture into dir through capture's Writer, as
// a proxy would, and returns it.
func Build(t testing.TB, dir string) *Corpus {
	t.Helper()
	p := &planter{f: newFaker()}
	lines := append(stdioLines(p), httpLines(p)...)
	meta := corpusMeta(p)
	path := filepath.Join(dir, "corpus.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true, Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 4, 15, 9, 0, 0, 0, time.UTC).UnixNano()
	for i, l := range lines {
		at := t0 + int64(i)*int64(time.Millisecond)
		if l.env != nil {
			w.Frame(l.conn, l.dir, at, []byte(l.text), 0, l.env)
		} else {
			w.Chunk(l.conn, l.stream, at, []byte(l.text+"\n"))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &Corpus{Path: path, Session: corpusSession, Secrets: p.secrets}
}

// corpusMeta is the metadata of an HTTP proxy run whose command line
// carries a token and an upstream with a password.
func corpusMeta(p *planter) capture.Meta {
	pw := p.plant("url password", "capture upstream URL and argv", p.f.password())
	up := "https://proxyuser:" + pw + "@agent.example/acp"
	tok := p.plant("auth token", "capture argv", p.f.opaque())
	return capture.Meta{Transport: "http", Upstream: up, Agent: "leakcheck",
		Argv: []string{"acpscope", "proxy", "--listen", "127.0.0.1:8700", "--upstream", up, "--auth-token", tok}}
}

// stdioLines are a stdio session: client (editor), agent and stderr.
func stdioLines(p *planter) []line {
	f := p.f
	c := func(s string) line { return line{stream: capture.StreamClient, text: s} }
	a := func(s string) line { return line{stream: capture.StreamAgent, text: s} }
	e := func(s string) line { return line{stream: capture.StreamStderr, text: s} }
	sshKey := p.plant("private key", "stderr (over several lines)", f.keyBlock("OPENSSH", 3))
	var stderrKey []line
	for _, l := range strings.Split(sshKey, "\n") {
		stderrKey = append(stderrKey, e(l))
	}
	lines := []line{
		c(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"_meta":{"authToken":"` +
			p.plant("opaque token", "initialize _meta", f.opaque()) + `","jetbrains.gateway":{"ticket":"` + p.plant("password", "initialize _meta gateway", f.password()) + `"}}}}`),
		a(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"authMethods":[{"id":"api-key","name":"API key"}],"_meta":{"accessToken":"` + p.plant("jwt", "initialize result _meta", f.jwt()) + `"}}}`),
		c(`{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"api-key","apiKey":"` + p.plant("anthropic key", "authenticate params", f.anthropic()) + `"}}`),
		a(`{"jsonrpc":"2.0","id":1,"result":{}}`),
		c(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[` +
			`{"name":"github","command":"npx","args":["-y","@modelcontextprotocol/server-github","--token","` + p.plant("github token", "mcpServers args", f.github("ghp_")) +
			`","--api-key=` + p.plant("openai key", "mcpServers args", f.openai()) + `"],"env":[{"name":"GITHUB_PERSONAL_ACCESS_TOKEN","value":"` +
			p.plant("github token", "mcpServers env", f.githubPAT()) + `"},{"name":"SLACK_BOT_TOKEN","value":"` + p.plant("slack token", "mcpServers env", f.slack("b")) + `"}]},` +
			`{"type":"http","name":"api","url":"https://svc:` + p.plant("url password", "mcpServers url", f.password()) + `@mcp.example/mcp","headers":[{"name":"Authorization","value":"Bearer ` +
			p.plant("opaque token", "mcpServers headers", f.opaque()) + `"},{"name":"X-Goog-Api-Key","value":"` + p.plant("google api key", "mcpServers headers", f.google()) + `"}]},` +
			`{"type":"sse","name":"events","url":"https://mcp.example/sse?access_token=` + p.plant("opaque token", "mcpServers url query", f.opaque()) + `","headers":[]}]}}`),
		a(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"` + corpusSession + `"}}`),
		c(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + corpusSession + `","prompt":[` +
			`{"type":"text","text":"my key is ` + p.plant("openai key", "prompt text", f.openai()) + ` and AWS ` + p.plant("aws access key id", "prompt text", f.awsKeyID("AKIA")) +
			` ` + p.plant("aws secret key", "prompt text", f.awsSecret()) + `"},` +
			`{"type":"resource_link","name":"blob","uri":"https://storage.example/c/blob?sv=2022-11-02&sr=b&sig=` + p.plant("azure sas signature", "resource_link uri", f.sasSig()) + `"},` +
			`{"type":"resource","resource":{"uri":"file:///w/.env","text":"` + js("STRIPE_SECRET_KEY="+p.plant("stripe key", "prompt resource (.env)", f.stripe("sk_live_"))+
			"\nDATABASE_URL=postgres://app:"+p.plant("url password", "prompt resource (.env)", f.password())+"@db.example/app\n") + `"}}]}}`),
		a(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + corpusSession + `","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Call the API","kind":"fetch","status":"pending",` +
			`"rawInput":{"url":"https://api.example/v1","api_key":"` + p.plant("opaque token", "tool call rawInput.api_key", f.opaque()) + `","password":"` + p.plant("password", "tool call rawInput.password", f.password()) + `"}}}}`),
		a(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + corpusSession + `","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed",` +
			`"rawOutput":{"stdout":"` + js("export GITLAB_TOKEN="+p.plant("gitlab token", "tool call rawOutput", f.gitlab())+"\n") + `","headers":{"Set-Cookie":"session=` + p.plant("opaque token", "tool call rawOutput headers", f.opaque()) + `; Path=/"}},` +
			`"content":[{"type":"content","content":{"type":"text","text":"Authorization: Bearer ` + p.plant("jwt", "tool call content", f.jwt()) + `"}}]}}}`),
		a(`{"jsonrpc":"2.0","id":10,"method":"terminal/create","params":{"sessionId":"` + corpusSession + `","command":"psql","args":["-h","db","-p","5432"],"env":[{"name":"PATH","value":"/usr/bin"},` +
			`{"name":"DB_PASSWORD","value":"` + p.plant("password", "terminal/create env DB_PASSWORD", f.password()) + `"},{"name":"AWS_SECRET_ACCESS_KEY","value":"` + p.plant("aws secret key", "terminal/create env", f.awsSecret()) + `"}]}}`),
		c(`{"jsonrpc":"2.0","id":10,"result":{"terminalId":"term1"}}`),
		a(`{"jsonrpc":"2.0","id":11,"method":"terminal/create","params":{"sessionId":"` + corpusSession + `","command":"sshpass","args":["-p","` + p.plant("password", "terminal/create args (sshpass -p)", f.password()) + `","ssh","-p","22","deploy@host"]}}`),
		c(`{"jsonrpc":"2.0","id":11,"result":{"terminalId":"term2"}}`),
		a(`{"jsonrpc":"2.0","id":12,"method":"terminal/create","params":{"sessionId":"` + corpusSession + `","command":"bash","args":["-c","` +
			js("mysql -uroot -p"+p.plant("password", "terminal/create shell line (mysql -p)", f.password())+" app && curl -u 'admin:"+p.plant("password", "terminal/create shell line (curl -u)", f.password())+"' https://x.example") + `"]}}`),
		c(`{"jsonrpc":"2.0","id":12,"result":{"terminalId":"term3"}}`),
		a(`{"jsonrpc":"2.0","id":13,"method":"fs/write_text_file","params":{"sessionId":"` + corpusSession + `","path":"/w/deploy/id_rsa","content":"` + js(p.plant("private key", "fs/write_text_file content", f.keyBlock("RSA", 4))+"\n") + `"}}`),
		c(`{"jsonrpc":"2.0","id":13,"result":null}`),
		a(`{"jsonrpc":"2.0","id":14,"method":"fs/write_text_file","params":{"sessionId":"` + corpusSession + `","path":"/w/.npmrc","content":"` + js("//registry.npmjs.org/:_authToken="+p.plant("npm token", "fs/write_text_file content", f.npm())+"\n") + `"}}`),
		c(`{"jsonrpc":"2.0","id":14,"result":null}`),
		a(`{"jsonrpc":"2.0","id":15,"method":"fs/read_text_file","params":{"sessionId":"` + corpusSession + `","path":"/w/.env"}}`),
		c(`{"jsonrpc":"2.0","id":15,"result":{"content":"` + js("HF_TOKEN="+p.plant("hugging face token", "fs/read_text_file result", f.hf())+
			"\nAZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=fake;AccountKey="+p.plant("azure storage key", "fs/read_text_file result", f.azureKey())+";EndpointSuffix=core.windows.net\n") + `"}}`),
		c(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"` + corpusSession + `","prompt":[{"type":"text","text":"again"}]}}`),
		a(`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"upstream 401: invalid x-api-key ` + p.plant("anthropic key", "error message", f.anthropic()) +
			`","data":{"request":{"headers":{"x-api-key":"` + p.plant("anthropic key", "error data", f.anthropic()) + `","authorization":"Basic ` + p.plant("basic credentials", "error data", f.basic()) + `"}}}}}`),
		a(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + corpusSession + `","_meta":{"vendor.debug":{"sessionToken":"` + p.plant("opaque token", "session/update _meta", f.opaque()) +
			`","endpoint":"wss://gw.example/ws?token=` + p.plant("opaque token", "session/update _meta URL", f.opaque()) + `"}},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`),
		a(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + corpusSession + `","update":{"sessionUpdate":"plan","entries":[],"_meta":{"seen":{"` + p.plant("github token", "object key", f.github("gho_")) + `":true}}}}}`),
		c(`{"jsonrpc":"2.0","id":5,"method":"session/load","params":{"sessionId":"` + corpusSession + `","cwd":"/w","mcpServers":[{"name":"gh","command":"gh-mcp","args":[],"env":{"GH_TOKEN":"` +
			p.plant("github token", "mcpServers env (object form)", f.github("ghu_")) + `"}}]}}`),
		a(`{"jsonrpc":"2.0","id":5,"result":{"_meta":{"refresh":{"refresh_token":"` + p.plant("github token", "session/load result _meta", f.github("ghr_")) + `"}}}}`),
		c(`[{"jsonrpc":"2.0","id":20,"method":"_vendor/configure","params":{"sessionId":"` + corpusSession + `","client_secret":"` + p.plant("password", "batch member", f.password()) + `"}},{"jsonrpc":"2.0","method":"_vendor/ping","params":{"sessionId":"` + corpusSession + `"}}]`),
		e("DEBUG POST https://api.anthropic.com/v1/messages Authorization: Bearer " + p.plant("anthropic key", "stderr", f.anthropic())),
		e("using aws_access_key_id=" + p.plant("aws access key id", "stderr", f.awsKeyID("ASIA")) + " aws_secret_access_key=" + p.plant("aws secret key", "stderr", f.awsSecret())),
		e("git clone https://oauth2:" + p.plant("gitlab token", "stderr URL", f.gitlab()) + "@gitlab.example/team/app.git"),
		e("npm ERR! //registry.npmjs.org/:_authToken=" + p.plant("npm token", "stderr", f.npm())),
		e("stripe: restricted key " + p.plant("stripe key", "stderr", f.stripe("rk_live_"))),
		e("slack: posting with " + p.plant("slack token", "stderr", f.slack("p"))),
		a("warning: falling back to token " + p.plant("github token", "non-JSON agent line", f.github("ghs_"))),
	}
	return append(lines, stderrKey...)
}

// httpLines are a Streamable HTTP and WebSocket connection of the same
// session: credentials raw in headers (as an imported capture may hold
// them) and fingerprinted (as the proxy stores them, the old unkeyed way
// and the keyed one).
func httpLines(p *planter) []line {
	f := p.f
	env := func(stream string, h map[string]string) *wire.Envelope {
		return &wire.Envelope{Method: "POST", Path: "/acp", Stream: stream, ConnectionID: "conn-1", SessionID: corpusSession, Headers: h}
	}
	return []line{
		{conn: 1, dir: wire.DirClient, env: env(wire.StreamPOST, map[string]string{
			"authorization":       "Bearer " + p.plant("opaque token", "POST Authorization header", f.opaque()),
			"cookie":              "sid=" + p.plant("opaque token", "POST Cookie header", f.opaque()) + "; theme=dark",
			"x-api-key":           p.plant("openai key", "POST X-Api-Key header", f.openai()),
			"proxy-authorization": "Basic " + p.plant("basic credentials", "POST Proxy-Authorization header", f.basic()),
			"content-type":        "application/json"}),
			text: `{"jsonrpc":"2.0","id":30,"method":"session/prompt","params":{"sessionId":"` + corpusSession + `","prompt":[{"type":"text","text":"deploy with ` + p.plant("stripe key", "POST body", f.stripe("sk_test_")) + `"}]}}`},
		{conn: 1, dir: wire.DirAgent, env: env(wire.StreamPOSTSSE, map[string]string{
			"authorization": "Bearer <redacted:sha256:8810ad58>",
			"set-cookie":    "acp_conn=" + p.plant("opaque token", "SSE Set-Cookie header", f.opaque()) + "; Path=/; HttpOnly"}),
			text: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + corpusSession + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"token ` + p.plant("slack token", "SSE event", f.slack("a")) + `"}}}}`},
		{conn: 1, dir: wire.DirAgent, env: env(wire.StreamSession, map[string]string{
			"authorization": "Bearer <redacted:hmac:0a1b2c3d4e5f>", "cookie": "sid=<redacted:hmac:a1b2c3d4e5f6>"}),
			text: `{"jsonrpc":"2.0","id":30,"result":{"stopReason":"end_turn"}}`},
		{conn: 1, dir: wire.DirClient, env: env(wire.StreamWebSocket, map[string]string{
			"sec-websocket-protocol": "acp, bearer." + p.plant("opaque token", "WebSocket subprotocol header", f.opaque()), "origin": "http://localhost:8700"}),
			text: `{"jsonrpc":"2.0","id":31,"method":"session/prompt","params":{"sessionId":"` + corpusSession + `","prompt":[{"type":"text","text":"key ` + p.plant("google api key", "WebSocket message", f.google()) + `"}]}}`},
		{conn: 1, dir: wire.DirAgent, env: env(wire.StreamWebSocket, nil),
			text: `{"jsonrpc":"2.0","id":31,"result":{"stopReason":"end_turn","_meta":{"usage":{"apiKeyUsed":"` + p.plant("openai key", "WebSocket result _meta", f.openai()) + `"}}}}`},
		{conn: 1, dir: wire.DirAgent, env: &wire.Envelope{Method: "POST", Path: "/acp", Status: 401, Stream: wire.StreamHTTPControl, ConnectionID: "conn-1"},
			text: "invalid token " + p.plant("jwt", "HTTP error body", f.jwt())},
	}
}
