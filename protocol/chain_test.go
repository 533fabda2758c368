package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// wrapIn wraps a request or notification body in a successor wrapper
// with method outer, keeping the id outside as the RFD does.
func wrapIn(t testing.TB, outer, body string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	inner := map[string]json.RawMessage{"method": m["method"]}
	if p, ok := m["params"]; ok {
		inner["params"] = p
	}
	w := map[string]any{"jsonrpc": "2.0", "method": outer, "params": inner}
	if id, ok := m["id"]; ok {
		w["id"] = id
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUnwrap(t *testing.T) {
	prompt := `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`
	update := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"plan","entries":[]}}}`
	perm := `{"jsonrpc":"2.0","id":"p","method":"session/request_permission","params":{"sessionId":"s3","options":[]}}`
	tests := []struct {
		name    string
		dir     wire.Dir
		body    string
		method  string
		session string
		id      string
		hop     int
		wrapper string
		from    wire.Dir
	}{
		{"plain request", wire.DirClient, prompt, "session/prompt", "s1", "7", 0, "", wire.DirClient},
		{"one hop, proxy to successor", wire.DirAgent, wrapIn(t, "_proxy/successor/request", prompt), "session/prompt", "s1", "7", 1, "_proxy/successor/request", wire.DirClient},
		{"one hop, from successor", wire.DirClient, wrapIn(t, "_proxy/successor/notification", update), "session/update", "s2", "", 1, "_proxy/successor/notification", wire.DirAgent},
		{"one hop, newer spelling", wire.DirClient, wrapIn(t, "_proxy/successor", perm), "session/request_permission", "s3", `"p"`, 1, "_proxy/successor", wire.DirAgent},
		{"one hop, RFD spelling", wire.DirAgent, wrapIn(t, "proxy/successor", prompt), "session/prompt", "s1", "7", 1, "proxy/successor", wire.DirClient},
		{"two hops, to successor", wire.DirAgent, wrapIn(t, "_proxy/successor/request", wrapIn(t, "_proxy/successor/request", prompt)), "session/prompt", "s1", "7", 2, "_proxy/successor/request", wire.DirAgent},
		{"two hops, from successor", wire.DirClient, wrapIn(t, "_proxy/successor/notification", wrapIn(t, "_proxy/successor", update)), "session/update", "s2", "", 2, "_proxy/successor/notification", wire.DirClient},
		{"two hops, mixed spellings", wire.DirAgent, wrapIn(t, "_proxy/successor", wrapIn(t, "proxy/successor", perm)), "session/request_permission", "s3", `"p"`, 2, "_proxy/successor", wire.DirAgent},
		{"wrapper without inner method", wire.DirAgent, `{"jsonrpc":"2.0","id":1,"method":"_proxy/successor/request","params":{"params":{}}}`, "_proxy/successor/request", "", "1", 0, "", wire.DirAgent},
		{"wrapper with array params", wire.DirAgent, `{"jsonrpc":"2.0","id":1,"method":"_proxy/successor","params":[1]}`, "_proxy/successor", "", "1", 0, "", wire.DirAgent},
		{"inner method not a string", wire.DirAgent, `{"jsonrpc":"2.0","method":"_proxy/successor","params":{"method":3}}`, "_proxy/successor", "", "", 0, "", wire.DirAgent},
		{"wrapped extension", wire.DirClient, `{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"_zed.dev/x","params":{"sessionId":"z"},"_meta":{"a":1}}}`, "_zed.dev/x", "z", "", 1, "_proxy/successor/notification", wire.DirAgent},
		{"wrapped without params", wire.DirClient, `{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/cancel"}}`, "session/cancel", "", "", 1, "_proxy/successor/notification", wire.DirAgent},
		{"proxy initialize is not a wrapper", wire.DirClient, `{"jsonrpc":"2.0","id":0,"method":"_proxy/initialize","params":{"protocolVersion":1}}`, "_proxy/initialize", "", "0", 0, "", wire.DirClient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := FromLine(1, tt.dir, []byte(tt.body))
			in := Unwrap(&m)
			if in.Method != tt.method || in.Session != tt.session || string(in.ID) != tt.id || in.Hop != tt.hop || in.Wrapper != tt.wrapper {
				t.Errorf("Unwrap = method %q session %q id %s hop %d wrapper %q\nwant method %q session %q id %s hop %d wrapper %q",
					in.Method, in.Session, in.ID, in.Hop, in.Wrapper, tt.method, tt.session, tt.id, tt.hop, tt.wrapper)
			}
			if m.Method != tt.method || m.Session != tt.session || int(m.Hop) != tt.hop {
				t.Errorf("FromLine = method %q session %q hop %d, want the inner message", m.Method, m.Session, m.Hop)
			}
			if got := m.From(); got != tt.from {
				t.Errorf("From = %s, want %s", got, tt.from)
			}
			if tt.hop > 0 {
				// The inner params are the exact bytes inside the wrapper.
				if in.Params != nil && !bytes.Contains(m.Body, in.Params) {
					t.Errorf("inner params %s are not a slice of the body's bytes", in.Params)
				}
				if got := string(m.params()); got != string(in.Params) {
					t.Errorf("params() = %s, want the inner %s", got, in.Params)
				}
			}
		})
	}
}

// TestUnwrapResponse: a response carries no method; its Inner comes from
// the metadata pairing gives it.
func TestUnwrapResponse(t *testing.T) {
	m := FromLine(2, wire.DirClient, []byte(`{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}`))
	m.Method, m.Session, m.Hop = "session/prompt", "s1", 1
	in := Unwrap(&m)
	if in.Method != "session/prompt" || in.Session != "s1" || in.Hop != 1 || string(in.ID) != "7" || in.Params != nil {
		t.Errorf("Unwrap(response) = %+v", in)
	}
}

// TestPairAcrossWrapping: a wrapped request and its plain answer pair by
// the outer id in both directions and at two hops, and the answer takes
// the inner method, session and hop; a plain request with the same id in
// the other direction keeps its own pairing.
func TestPairAcrossWrapping(t *testing.T) {
	newReq := `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`
	perm := `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s9","options":[]}}`
	tests := []struct {
		name            string
		reqDir          wire.Dir
		req, resp       string
		method, session string
		hop             uint8
	}{
		{"proxy to successor", wire.DirAgent, wrapIn(t, "_proxy/successor/request", newReq), `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s9"}}`, "session/new", "s9", 1},
		{"from successor", wire.DirClient, wrapIn(t, "_proxy/successor/request", perm), `{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"cancelled"}}}`, "session/request_permission", "s9", 1},
		{"two hops", wire.DirAgent, wrapIn(t, "_proxy/successor", wrapIn(t, "_proxy/successor/request", newReq)), `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s9"}}`, "session/new", "s9", 2},
		{"two hops, error", wire.DirClient, wrapIn(t, "_proxy/successor/request", wrapIn(t, "_proxy/successor/request", perm)), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`, "session/request_permission", "s9", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := `{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`
			msgs := []Msg{
				FromLine(1, tt.reqDir.Reverse(), []byte(other)),
				FromLine(2, tt.reqDir, []byte(tt.req)),
				FromLine(3, tt.reqDir.Reverse(), []byte(tt.resp)),
				FromLine(4, tt.reqDir, []byte(`{"jsonrpc":"2.0","id":1,"result":{"sessions":[]}}`)),
			}
			peer := Pair(msgs)
			if peer[1] != 2 || peer[2] != 1 || peer[0] != 3 {
				t.Fatalf("peers %v, want the wrapped request with its answer and the plain one with its own", peer)
			}
			r := msgs[2]
			if r.Method != tt.method || r.Session != tt.session || r.Hop != tt.hop {
				t.Errorf("answer = method %q session %q hop %d, want %q %q %d", r.Method, r.Session, r.Hop, tt.method, tt.session, tt.hop)
			}
			if msgs[3].Hop != 0 || msgs[3].Method != "session/list" {
				t.Errorf("the plain answer took %q hop %d", msgs[3].Method, msgs[3].Hop)
			}
		})
	}
}

// TestLintChainHops: the inner messages of a recorded chain link are
// judged at their hop, each with its own lifecycle, and a conformant link
// lints clean.
func TestLintChainHops(t *testing.T) {
	msgs, opts := loadJSONL(t, "testdata/lint/chain/wrapper-shape.good.jsonl")
	if found := Lint(msgs, opts); len(found) > 0 {
		t.Fatalf("a conformant chain link has findings:\n%s", dump(found))
	}
	// The same link without its wrapped initialize: hop 1 starts with
	// session/new, which only hop 1's lifecycle sees as early.
	var cut []Msg
	for _, m := range msgs {
		if m.Hop == 1 && m.Method == "initialize" {
			continue
		}
		if m.Seq == 3 { // its answer
			continue
		}
		cut = append(cut, m)
	}
	found := Lint(cut, opts)
	hits := withRule(found, "acp/initialize-first")
	if len(hits) != 1 || !strings.Contains(hits[0].Message, "hop 1") {
		t.Errorf("want one acp/initialize-first at hop 1, got:\n%s", dump(found))
	}
}

// TestTranscriptFollowsWrappedSessions: a chain link's transcript holds
// the session twice, once per hop, each with what its side said.
func TestTranscriptFollowsWrappedSessions(t *testing.T) {
	msgs, _ := loadJSONL(t, "testdata/lint/chain/wrapper-shape.good.jsonl")
	tr := BuildTranscript(msgs)
	if len(tr.Sessions) != 2 {
		t.Fatalf("%d sessions, want s1 at hop 0 and at hop 1", len(tr.Sessions))
	}
	for _, s := range tr.Sessions {
		turns := s.PromptTurns()
		if s.ID != "s1" || len(turns) != 1 || turns[0].StopReason != "end_turn" || turns[0].AgentText() != "hello" {
			t.Errorf("session %s hop %d: %d turns %+v", s.ID, s.Hop, len(turns), turns)
		}
	}
	if tr.Session("s1").Hop != 0 {
		t.Errorf("Session prefers hop 0")
	}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, tr, RenderOptions{}); err != nil || !strings.Contains(md.String(), "↪ hop 1") {
		t.Errorf("rendered transcript does not name the hop (%v):\n%s", err, md.String())
	}
}

// FuzzUnwrap: any bytes unwrap without panicking, the inner params are
// bytes of the message, and the hop is bounded.
func FuzzUnwrap(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"_proxy/successor/request","params":{"method":"session/prompt","params":{"sessionId":"s"}}}`))
	f.Add([]byte(`{"method":"_proxy/successor","params":{"method":"_proxy/successor","params":{"method":"x","params":[]}}}`))
	f.Add([]byte(`{"method":"proxy/successor","params":{"method":"\u005fproxy/successor","params":{"method":"a"}}}`))
	f.Add([]byte(`{"method":"_proxy/successor/notification","params":{"method":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m := FromLine(1, wire.DirAgent, body)
		in := Unwrap(&m)
		if in.Hop > maxHops || int(m.Hop) > maxHops {
			t.Fatalf("hop %d (msg %d) beyond the bound", in.Hop, m.Hop)
		}
		if in.Params != nil && !bytes.Contains(body, in.Params) {
			t.Fatalf("params %q not from the body", in.Params)
		}
		_ = fmt.Sprint(m.From(), HopLabel(m.Hop))
	})
}
