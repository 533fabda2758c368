package har

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// frame is one frame of a test capture.
type frame struct {
	conn uint32
	dir  wire.Dir
	body string
	env  wire.Envelope
}

func post(conn uint32, connID, session, body string, h map[string]string) frame {
	return frame{conn, wire.DirClient, body, wire.Envelope{Method: "POST", Path: "/acp", Proto: "HTTP/2.0", Stream: wire.StreamPOST, ConnectionID: connID, SessionID: session, Headers: h}}
}

func agent(conn uint32, stream, method string, status int, connID, session, eventID, body string) frame {
	return frame{conn, wire.DirAgent, body, wire.Envelope{Method: method, Path: "/acp", Proto: "HTTP/2.0", Status: status, Stream: stream, ConnectionID: connID, SessionID: session, EventID: eventID,
		Headers: map[string]string{"content-type": map[string]string{wire.StreamPOSTReply: "application/json", wire.StreamHTTPControl: ""}[stream]}}}
}

// httpSession is what a proxy records of an ACP session over Streamable
// HTTP and a WebSocket: initialize and its reply, the connection's GET
// stream, session/new answered on that stream after a 202, two prompts of
// two sessions streaming over SSE at once on one connection, a
// cancellation, a DELETE, and a WebSocket connection with a text
// message each way, a binary one and a close.
var httpSession = []frame{
	post(1, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`,
		map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream", "authorization": "Bearer <redacted:hmac:0123456789abcdef>"}),
	agent(1, wire.StreamPOSTReply, "POST", 200, "c1", "", "", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`),
	agent(1, wire.StreamHTTPControl, "GET", 200, "c1", "", "", ``),
	post(1, "c1", "", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`, nil),
	agent(1, wire.StreamHTTPControl, "POST", 202, "c1", "", "", ``),
	agent(1, wire.StreamConnection, "GET", 200, "c1", "", "1", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`),
	post(1, "c1", "", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`, nil),
	agent(1, wire.StreamHTTPControl, "POST", 202, "c1", "", "", ``),
	agent(1, wire.StreamConnection, "GET", 200, "c1", "", "2", `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2"}}`),
	post(1, "c1", "s1", `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`, nil),
	post(1, "c1", "s2", `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s2","prompt":[]}}`, nil),
	agent(1, wire.StreamPOSTSSE, "POST", 200, "c1", "s1", "", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"one"}}}}`),
	agent(1, wire.StreamPOSTSSE, "POST", 200, "c1", "s2", "", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"two"}}}}`),
	post(1, "c1", "s2", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s2"}}`, nil),
	agent(1, wire.StreamHTTPControl, "POST", 202, "c1", "s2", "", ``),
	agent(1, wire.StreamPOSTSSE, "POST", 200, "c1", "s2", "", `{"jsonrpc":"2.0","id":4,"result":{"stopReason":"cancelled"}}`),
	agent(1, wire.StreamPOSTSSE, "POST", 200, "c1", "s1", "", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
	agent(1, wire.StreamHTTPControl, "DELETE", 204, "c1", "", "", ``),
	agent(2, wire.StreamHTTPControl, "GET", 101, "", "", "", ``),
	{2, wire.DirClient, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`, wire.Envelope{Method: "GET", Path: "/acp", Stream: wire.StreamWebSocket}},
	{2, wire.DirAgent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`, wire.Envelope{Method: "GET", Path: "/acp", Stream: wire.StreamWebSocket}},
	{2, wire.DirAgent, "\x00\x01", wire.Envelope{Method: "GET", Path: "/acp", Stream: wire.StreamWebSocket}},
	{2, wire.DirClient, ``, wire.Envelope{Method: "GET", Path: "/acp", Stream: wire.StreamWebSocket, Headers: map[string]string{"ws-close": "1000 bye"}}},
}

func writeCapture(t *testing.T, transport string, frames []frame) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "http.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true,
		Meta: capture.Meta{Transport: transport, Listen: "127.0.0.1:8700", Upstream: "http://127.0.0.1:9000/acp", ProxyVersion: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC).UnixNano()
	for i, f := range frames {
		env := f.env
		var flags wire.Flags
		if strings.HasPrefix(f.body, "\x00") {
			flags = wire.FlagBinary
		}
		w.Frame(f.conn, f.dir, t0+int64(i)*int64(10*time.Millisecond), []byte(f.body), flags, &env)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func export(t *testing.T, path string, opts capture.ExportOptions) ([]byte, error) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	_, err = Export(r, &out, opts)
	return out.Bytes(), err
}

// TestValidHAR: the export of an HTTP capture is valid HAR 1.2, by a
// schema written from the specification's field list.
func TestValidHAR(t *testing.T) {
	out, err := export(t, writeCapture(t, "http", httpSession), capture.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, out)
}

func validate(t *testing.T, doc []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(filepath.Join("testdata", "har-1.2.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("the HAR is not valid HAR 1.2: %v", err)
	}
}

// TestExchanges: frames go back into the exchanges they came in.
func TestExchanges(t *testing.T) {
	out, err := export(t, writeCapture(t, "http", httpSession), capture.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc archive
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	es := doc.Log.Entries
	type want struct {
		method, url string
		status      int
		post, text  []string // substrings of the request and response bodies
		resource    string
	}
	wants := []want{
		{"POST", "http://127.0.0.1:8700/acp", 200, []string{`"initialize"`}, []string{`"protocolVersion":1`}, "fetch"},
		{"GET", "http://127.0.0.1:8700/acp", 200, nil, []string{"id: 1\ndata: {", `"sessionId":"s1"`, "id: 2\n", `"sessionId":"s2"`}, "eventsource"},
		{"POST", "http://127.0.0.1:8700/acp", 202, []string{`"id":1,"method":"session/new"`}, nil, "fetch"},
		{"POST", "http://127.0.0.1:8700/acp", 202, []string{`"id":2,"method":"session/new"`}, nil, "fetch"},
		{"POST", "http://127.0.0.1:8700/acp", 200, []string{`"id":3`}, []string{`"text":"one"`, `"stopReason":"end_turn"`}, "fetch"},
		{"POST", "http://127.0.0.1:8700/acp", 200, []string{`"id":4`}, []string{`"text":"two"`, `"stopReason":"cancelled"`}, "fetch"},
		{"POST", "http://127.0.0.1:8700/acp", 202, []string{`session/cancel`}, nil, "fetch"},
		{"DELETE", "http://127.0.0.1:8700/acp", 204, nil, nil, ""},
		{"GET", "ws://127.0.0.1:8700/acp", 101, nil, nil, "websocket"},
	}
	if len(es) != len(wants) {
		for _, e := range es {
			t.Logf("%s %s %d", e.Request.Method, e.Request.URL, e.Response.Status)
		}
		t.Fatalf("%d entries, want %d", len(es), len(wants))
	}
	for i, w := range wants {
		e := es[i]
		if e.Request.Method != w.method || e.Request.URL != w.url || e.Response.Status != w.status || e.ResourceType != w.resource {
			t.Errorf("entry %d: %s %s %d %s, want %s %s %d %s", i, e.Request.Method, e.Request.URL, e.Response.Status, e.ResourceType, w.method, w.url, w.status, w.resource)
		}
		for _, s := range w.post {
			if e.Request.PostData == nil || !strings.Contains(e.Request.PostData.Text, s) {
				t.Errorf("entry %d: request body lacks %q", i, s)
			}
		}
		for _, s := range w.text {
			if !strings.Contains(e.Response.Content.Text, s) {
				t.Errorf("entry %d: response lacks %q:\n%s", i, s, e.Response.Content.Text)
			}
		}
		if e.Time < 0 || e.Timings.Wait < 0 || e.Time != e.Timings.Send+e.Timings.Wait+e.Timings.Receive {
			t.Errorf("entry %d: time %v, timings %+v", i, e.Time, e.Timings)
		}
	}
	if es[4].Response.Content.MimeType != "text/event-stream" || strings.Contains(es[4].Response.Content.Text, `"two"`) {
		t.Errorf("the s1 prompt's stream: %s %q", es[4].Response.Content.MimeType, es[4].Response.Content.Text)
	}
	if es[4].Timings.Wait != 20 || es[4].Timings.Receive != 50 {
		t.Errorf("the s1 prompt's timings %+v, want wait 20 ms (first event) and receive 50 ms (to its answer)", es[4].Timings)
	}
	ws := es[8].WebSocket
	wantWS := []wsFrame{{"send", 0, 1, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`, ""},
		{"receive", 0, 1, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`, ""}, {"receive", 0, 2, "AAE=", ""}, {"send", 0, 8, "1000 bye", ""}}
	if len(ws) != len(wantWS) {
		t.Fatalf("websocket messages %+v", ws)
	}
	for i, w := range wantWS {
		if ws[i].Type != w.Type || ws[i].Opcode != w.Opcode || ws[i].Data != w.Data || ws[i].Time < 1.7e9 {
			t.Errorf("websocket message %d: %+v, want %+v", i, ws[i], w)
		}
	}
	for _, h := range es[0].Request.Headers {
		if h.Name == "Authorization" && h.Value != "Bearer <redacted:token#1>" {
			t.Errorf("Authorization exported as %q", h.Value)
		}
	}
	if !bytes.Contains(out, []byte(`"name": "Accept"`)) || bytes.Contains(out, []byte("hmac:")) {
		t.Error("request headers: Accept missing, or a credential fingerprint kept")
	}
}

// TestRefusesStdio: a stdio capture has no HTTP to show.
func TestRefusesStdio(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdio.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true, Meta: capture.Meta{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Chunk(0, capture.StreamClient, 1, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n"))
	w.Close()
	for _, transport := range []string{"stdio", "import"} {
		if transport == "import" { // an import of a stdio capture: known by its records
			os.Remove(path)
			w, _ := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true, Meta: capture.Meta{Transport: "import"}})
			w.Chunk(0, capture.StreamClient, 1, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n"))
			w.Close()
		}
		out, err := export(t, path, capture.ExportOptions{})
		if !errors.Is(err, ErrNotHTTP) || len(out) != 0 {
			t.Errorf("%s capture: %v, %d bytes written; want ErrNotHTTP and nothing", transport, err, len(out))
		}
	}
	if !strings.Contains(ErrNotHTTP.Error(), "--format html") {
		t.Errorf("the error does not say what to do instead: %v", ErrNotHTTP)
	}
}

// TestAlteredWebSocketMessage: a WebSocket message acpscope altered (a
// proxy run with a fault plan) says so in its _acpscopeFault field, and
// the document stays valid HAR 1.2.
func TestAlteredWebSocketMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ws.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true,
		Meta: capture.Meta{Transport: "http", Listen: "127.0.0.1:8700", Upstream: "http://127.0.0.1:9000/acp", ProxyVersion: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC).UnixNano()
	env := func() *wire.Envelope {
		return &wire.Envelope{Method: "GET", Path: "/acp", Stream: wire.StreamWebSocket}
	}
	w.Frame(3, wire.DirAgent, t0, nil, 0, &wire.Envelope{Method: "GET", Path: "/acp", Status: 101, Stream: wire.StreamHTTPControl})
	w.Frame(3, wire.DirClient, t0+1e6, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), 0, env())
	w.Altered(3, wire.DirAgent, t0+2e6, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`), env(),
		&protocol.Fault{ID: 1, Action: protocol.ActionDelay, Stage: protocol.StageForwarded, Rule: "slow-agent", By: protocol.ByPlan})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := export(t, path, capture.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, out)
	var doc archive
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Log.Entries) != 1 || len(doc.Log.Entries[0].WebSocket) != 2 {
		t.Fatalf("entries %+v", doc.Log.Entries)
	}
	msgs := doc.Log.Entries[0].WebSocket
	if msgs[0].Fault != "" || msgs[1].Fault != "forwarded (delay by rule slow-agent, #1)" {
		t.Errorf("the messages' faults: %q, %q", msgs[0].Fault, msgs[1].Fault)
	}
}

// TestAlteredPOST: under a fault plan on proxy, a POST whose message
// acpscope changed is one entry (the client's body, the upstream's
// answer, the copy sent upstream in its comment), a dropped one keeps the
// 202 acpscope answered, and a POST acpscope made on its own is an entry
// of its own; each says what happened in _acpscopeFault.
func TestAlteredPOST(t *testing.T) {
	path := filepath.Join(t.TempDir(), "post.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true,
		Meta: capture.Meta{Transport: "http", Listen: "127.0.0.1:8700", Upstream: "http://127.0.0.1:9000/acp", ProxyVersion: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC).UnixNano()
	post := &wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST, ConnectionID: "c1", SessionID: "s1"}
	accepted := &wire.Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: wire.StreamHTTPControl, ConnectionID: "c1"}
	fault := func(id uint64, action, stage string) *protocol.Fault {
		return &protocol.Fault{ID: id, Action: action, Stage: stage, Rule: "r", By: protocol.ByPlan}
	}
	prompt := func(text string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"` + text + `"}]}}`)
	}
	cancel := []byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`)
	answer := []byte(`{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"cancelled"}}}`)
	w.Altered(1, wire.DirClient, t0, prompt("hi"), post, fault(1, protocol.ActionRewrite, protocol.StageReplaced))
	w.Altered(1, wire.DirClient, t0+1e6, prompt("bye"), post, fault(1, protocol.ActionRewrite, protocol.StageForwarded))
	w.Frame(1, wire.DirAgent, t0+2e6, nil, 0, accepted)
	w.Altered(1, wire.DirClient, t0+3e6, cancel, post, fault(2, protocol.ActionDrop, protocol.StageDropped))
	w.Frame(1, wire.DirAgent, t0+4e6, nil, 0, accepted)
	w.Altered(1, wire.DirClient, t0+5e6, answer, post, fault(3, protocol.ActionAnswer, protocol.StageInjected))
	w.Frame(1, wire.DirAgent, t0+6e6, nil, 0, accepted)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := export(t, path, capture.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, out)
	var doc archive
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	want := []struct{ body, fault, comment string }{
		{string(prompt("hi")), "forwarded (rewrite by rule r, #1)", "acpscope sent upstream instead: " + string(prompt("bye"))},
		{string(cancel), "dropped (drop by rule r, #2)", ""},
		{string(answer), "injected (answer by rule r, #3)", ""},
	}
	if len(doc.Log.Entries) != len(want) {
		t.Fatalf("%d entries, want %d: %s", len(doc.Log.Entries), len(want), out)
	}
	for i, wt := range want {
		e := doc.Log.Entries[i]
		if e.Request.PostData == nil || e.Request.PostData.Text != wt.body || e.Fault != wt.fault || e.Comment != wt.comment || e.Response.Status != 202 {
			t.Errorf("entry %d: body %+v, fault %q, comment %q, status %d; want %s, %q, %q, 202",
				i, e.Request.PostData, e.Fault, e.Comment, e.Response.Status, wt.body, wt.fault, wt.comment)
		}
	}
}

// TestWithheldEvents: an SSE event acpscope dropped, or replaced by a
// changed copy, is not in the stream the HAR shows (the client never
// received it); the changed copy is, and the log's comment says how many
// were left out.
func TestWithheldEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sse.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true,
		Meta: capture.Meta{Transport: "http", Listen: "127.0.0.1:8700", Upstream: "http://127.0.0.1:9000/acp", ProxyVersion: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC).UnixNano()
	stream := &wire.Envelope{Method: "GET", Path: "/acp", Status: 200, Stream: wire.StreamConnection, ConnectionID: "c1"}
	update := func(text string) []byte {
		return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`)
	}
	fault := func(id uint64, action, stage string) *protocol.Fault {
		return &protocol.Fault{ID: id, Action: action, Stage: stage, Rule: "r", By: protocol.ByPlan}
	}
	w.Frame(1, wire.DirAgent, t0, nil, 0, &wire.Envelope{Method: "GET", Path: "/acp", Status: 200, Stream: wire.StreamHTTPControl, ConnectionID: "c1"})
	w.Frame(1, wire.DirAgent, t0+1e6, update("one"), 0, stream)
	w.Altered(1, wire.DirAgent, t0+2e6, update("two"), stream, fault(1, protocol.ActionDrop, protocol.StageDropped))
	w.Altered(1, wire.DirAgent, t0+3e6, update("three"), stream, fault(2, protocol.ActionRewrite, protocol.StageReplaced))
	w.Altered(1, wire.DirAgent, t0+3e6, update("THREE"), stream, fault(2, protocol.ActionRewrite, protocol.StageForwarded))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := export(t, path, capture.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, out)
	var doc archive
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Log.Entries) != 1 {
		t.Fatalf("%d entries, want the one stream: %s", len(doc.Log.Entries), out)
	}
	text := doc.Log.Entries[0].Response.Content.Text
	for _, want := range []string{`"one"`, `"THREE"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the stream lacks %s: %q", want, text)
		}
	}
	for _, gone := range []string{`"two"`, `"three"`} {
		if strings.Contains(text, gone) {
			t.Errorf("the stream shows %s, which the client never received: %q", gone, text)
		}
	}
	if !strings.Contains(doc.Log.Comment, "2 agent messages acpscope dropped or replaced are left out") {
		t.Errorf("the log's comment does not say what was left out: %q", doc.Log.Comment)
	}
}
