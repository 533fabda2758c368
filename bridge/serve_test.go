package bridge

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// serveFixture is a serve Server wrapping the test agent in acp mode.
type serveFixture struct {
	srv  *Server
	http *httptest.Server
	rec  *netkit.Recorder
	c    *http.Client
	url  string
	// proto is the HTTP major version of the last POST.
	proto atomic.Int32
}

func startServe(t testing.TB, proto netkit.Proto, mod func(*ServeOptions)) *serveFixture {
	t.Helper()
	rec := &netkit.Recorder{}
	opts := ServeOptions{
		Argv:      agentArgv("acp"),
		Agent:     agent.Options{Grace: 500 * time.Millisecond},
		Recorder:  rec,
		KeepAlive: -1,
		Stderr:    io.Discard,
	}
	if mod != nil {
		mod(&opts)
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	f := &serveFixture{srv: srv, rec: rec}
	f.http = netkit.StartServer(t, proto, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			f.proto.Store(int32(r.ProtoMajor))
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close() })
	f.c = netkit.ClientFor(t, proto, f.http)
	jar, _ := cookiejar.New(nil)
	f.c.Jar = jar
	f.url = f.http.URL + "/acp"
	return f
}

// do sends a request with headers given as name, value pairs.
func (f *serveFixture) do(t *testing.T, method, body string, hv ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, f.url, rd)
	for i := 0; i+1 < len(hv); i += 2 {
		req.Header.Set(hv[i], hv[i+1])
	}
	resp, err := f.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, body, err)
	}
	return resp
}

// initialize opens a connection and returns its id.
func (f *serveFixture) initialize(t *testing.T) string {
	t.Helper()
	resp := f.do(t, "POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`, "Content-Type", netkit.CTJSON)
	body := netkit.ReadAll(t, resp.Body)
	id := resp.Header.Get(acphttp.HeaderConnectionID)
	if resp.StatusCode != 200 || id == "" || !strings.Contains(body, `"protocolVersion":1`) {
		t.Fatalf("initialize: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	return id
}

// openStream opens a GET stream and returns a channel of its events' data.
func (f *serveFixture) openStream(t *testing.T, connID, sessionID string) (<-chan string, *http.Response) {
	t.Helper()
	hv := []string{"Accept", "text/event-stream", acphttp.HeaderConnectionID, connID}
	if sessionID != "" {
		hv = append(hv, acphttp.HeaderSessionID, sessionID)
	}
	resp := f.do(t, "GET", "", hv...)
	if resp.StatusCode != 200 {
		t.Fatalf("GET stream %s/%s: %d %s", connID, sessionID, resp.StatusCode, netkit.ReadAll(t, resp.Body))
	}
	events := make(chan string, 64)
	go func() { // reader: ends when the stream ends
		defer close(events)
		var d wire.SSEDecoder
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			d.Push(buf[:n], func(e *wire.SSEEvent) {
				if e.Comment {
					events <- ":" + string(e.Data)
				} else {
					events <- string(e.Data)
				}
			})
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return events, resp
}

func next(t *testing.T, events <-chan string) string {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("stream ended")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return ""
}

// TestServeStatuses is the RFD's status table.
func TestServeStatuses(t *testing.T) {
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.AuthToken = "tok" })
	auth := []string{"Authorization", "Bearer tok"}
	withAuth := func(hv ...string) []string { return append(append([]string{}, auth...), hv...) }
	resp := f.do(t, "POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, withAuth("Content-Type", netkit.CTJSON)...)
	conn := resp.Header.Get(acphttp.HeaderConnectionID)
	netkit.ReadAll(t, resp.Body)
	if resp.StatusCode != 200 || conn == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	if !strings.Contains(resp.Header.Get("Set-Cookie"), "acp_conn="+conn) {
		t.Errorf("no affinity cookie: %q", resp.Header.Get("Set-Cookie"))
	}
	newSession := `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`
	prompt := `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[]}}`
	tests := []struct {
		name, method, body string
		hv                 []string
		want               int
	}{
		{"no token", "POST", newSession, []string{"Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn}, 401},
		{"wrong token", "POST", newSession, []string{"Authorization", "Bearer nope", "Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn}, 401},
		{"cross origin", "POST", newSession, withAuth("Origin", "http://evil.example", "Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn), 403},
		{"not json", "POST", newSession, withAuth("Content-Type", "text/plain", acphttp.HeaderConnectionID, conn), 415},
		{"no content type", "POST", newSession, withAuth(acphttp.HeaderConnectionID, conn), 415},
		{"batch", "POST", "[" + newSession + "]", withAuth("Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn), 501},
		{"no connection id", "POST", newSession, withAuth("Content-Type", netkit.CTJSON), 400},
		{"unknown connection", "POST", newSession, withAuth("Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, "nope"), 404},
		{"session-scoped without session id", "POST", prompt, withAuth("Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn), 400},
		{"accepted", "POST", newSession, withAuth("Content-Type", "application/json; charset=utf-8", acphttp.HeaderConnectionID, conn), 202},
		{"GET without accept", "GET", "", withAuth(acphttp.HeaderConnectionID, conn), 406},
		{"GET without connection id", "GET", "", withAuth("Accept", "text/event-stream"), 400},
		{"GET unknown connection", "GET", "", withAuth("Accept", "text/event-stream", acphttp.HeaderConnectionID, "nope"), 404},
		{"PUT", "PUT", "", withAuth(acphttp.HeaderConnectionID, conn), 405},
		{"DELETE without id", "DELETE", "", auth, 400},
		{"DELETE unknown", "DELETE", "", withAuth(acphttp.HeaderConnectionID, "nope"), 404},
		{"DELETE", "DELETE", "", withAuth(acphttp.HeaderConnectionID, conn), 202},
		{"after DELETE", "POST", newSession, withAuth("Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn), 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.do(t, tt.method, tt.body, tt.hv...)
			body := netkit.ReadAll(t, resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("%s: status %d (%q), want %d", tt.name, resp.StatusCode, body, tt.want)
			}
			if tt.want == 202 && body != "" {
				t.Errorf("202 with a body: %q", body)
			}
		})
	}
	// Every status was recorded, and the token never in clear.
	for _, want := range []int{200, 202, 400, 401, 403, 404, 405, 406, 415, 501} {
		found := false
		for _, fr := range f.rec.All() {
			found = found || fr.Env.Status == want
			for _, v := range fr.Env.Headers {
				if strings.Contains(v, "tok") && !strings.Contains(v, "redacted") {
					t.Fatalf("token stored in clear: %q", v)
				}
			}
		}
		if !found {
			t.Errorf("status %d not recorded", want)
		}
	}
}

// TestServeSecondStream checks the 409 for a stream opened twice.
func TestServeSecondStream(t *testing.T) {
	f := startServe(t, netkit.H1, nil)
	conn := f.initialize(t)
	f.openStream(t, conn, "")
	resp := f.do(t, "GET", "", "Accept", "text/event-stream", acphttp.HeaderConnectionID, conn)
	netkit.ReadAll(t, resp.Body)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("second GET: %d, want 409", resp.StatusCode)
	}
}

// TestServeRouting follows the RFD's flow over each protocol: session/new's
// response on the connection stream (sent before the stream was opened,
// so buffered), the prompt's updates and response on the session stream,
// keep-alives, and teardown on DELETE.
func TestServeRouting(t *testing.T) {
	for _, proto := range netkit.AllProtos {
		t.Run(string(proto), func(t *testing.T) {
			f := startServe(t, proto, func(o *ServeOptions) { o.KeepAlive = 100 * time.Millisecond })
			conn := f.initialize(t)
			hv := []string{"Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn}
			resp := f.do(t, "POST", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`, hv...)
			if resp.StatusCode != 202 {
				t.Fatalf("session/new: %d", resp.StatusCode)
			}
			time.Sleep(50 * time.Millisecond) // the reply is buffered until the GET
			connEvents, _ := f.openStream(t, conn, "")
			if got := next(t, connEvents); got != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-1"}}` {
				t.Fatalf("connection stream: %q", got)
			}
			sessEvents, _ := f.openStream(t, conn, "sess-1")
			resp = f.do(t, "POST", `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[]}}`,
				append(hv, acphttp.HeaderSessionID, "sess-1")...)
			if resp.StatusCode != 202 {
				t.Fatalf("prompt: %d", resp.StatusCode)
			}
			var got []string
			for len(got) < 3 {
				if e := next(t, sessEvents); !strings.HasPrefix(e, ":") {
					got = append(got, e)
				}
			}
			if !strings.Contains(got[0], `"text":"Hello"`) || !strings.Contains(got[1], `"text":", world"`) || got[2] != `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}` {
				t.Fatalf("session stream: %q", got)
			}
			if e := next(t, connEvents); e != ": keep-alive" {
				t.Fatalf("connection stream after the prompt: %q, want a keep-alive", e)
			}
			if resp := f.do(t, "DELETE", "", acphttp.HeaderConnectionID, conn); resp.StatusCode != 202 {
				t.Fatalf("DELETE: %d", resp.StatusCode)
			}
			for range connEvents {
			}
			for range sessEvents {
			}
			waitFor(t, func() bool { return f.srv.Conns() == 0 })
			netkit.ContainsAll(t, f.rec,
				`1 client POST post 0 {"jsonrpc":"2.0","id":0,"method":"initialize"`,
				`1 agent POST post-reply 200 {"jsonrpc":"2.0","id":0,"result":`,
				`1 agent GET sse-conn 200 {"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-1"}}`,
				`1 agent GET sse-session 200 {"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
				`1 agent DELETE http 202 `,
			)
			netkit.CheckRecordedProto(t, f.rec, proto)
		})
	}
}

// TestServeDisconnect checks that a connection whose client is gone is
// torn down after the grace.
func TestServeDisconnect(t *testing.T) {
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.DisconnectGrace = 100 * time.Millisecond })
	conn := f.initialize(t)
	_, resp := f.openStream(t, conn, "")
	resp.Body.Close()
	waitFor(t, func() bool { return f.srv.Conns() == 0 })
}

// TestServeWebSocket runs a conversation over WebSocket.
func TestServeWebSocket(t *testing.T) {
	f := startServe(t, netkit.H1, nil)
	ws, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if resp.Header.Get(acphttp.HeaderConnectionID) == "" {
		t.Fatalf("101 without Acp-Connection-Id: %v", resp.Header)
	}
	send := func(s string) { ws.WriteMessage(websocket.TextMessage, []byte(s)) }
	recv := func() string {
		ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		return string(msg)
	}
	ws.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3}) // ignored
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if got := recv(); !strings.Contains(got, `"protocolVersion":1`) {
		t.Fatalf("initialize: %q", got)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`)
	if got := recv(); got != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-1"}}` {
		t.Fatalf("session/new: %q", got)
	}
	ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	waitFor(t, func() bool { return f.srv.Conns() == 0 })
	var binary bool
	for _, fr := range f.rec.All() {
		binary = binary || fr.Flags&wire.FlagBinary != 0
	}
	if !binary {
		t.Error("binary frame not recorded")
	}
	netkit.ContainsAll(t, f.rec, `1 agent GET http 101 `, `1 client GET ws 0 {"jsonrpc":"2.0","id":1,"method":"session/new"`)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeStderr checks that an agent's stderr reaches serve's stderr
// and the capture, and that the agent goes when its WebSocket does.
func TestServeStderr(t *testing.T) {
	var out testkit.Buffer
	f := startServe(t, netkit.H1, func(o *ServeOptions) {
		o.Argv = agentArgv("stderr", "agent says hello")
		o.Stderr = &out
	})
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(out.String(), "agent says hello\n") })
	ws.Close()
	waitFor(t, func() bool { return f.srv.Conns() == 0 })
	waitFor(t, func() bool {
		got, ended := f.rec.Stream(1, capture.StreamStderr)
		return got == "agent says hello\n" && ended
	})
}

func TestOutStreamBound(t *testing.T) {
	st := newOutStream("", newStreamBudget(10), newOrderGate())
	if st.push(1, []byte("12345")) != pushQueued || st.push(2, []byte("67890")) != pushQueued {
		t.Fatal("pushes within the bound refused")
	}
	if got := st.push(3, []byte("x")); got != pushFull {
		t.Fatalf("a push beyond the bound of an unopened stream: %d, want pushFull", got)
	}
	if ok, _ := st.attach(); !ok {
		t.Fatal("attach refused")
	}
	// Beyond the bound of an open stream, a push waits for the client,
	// and ends when the client takes a message, leaves, or the stream
	// closes.
	ended := waitingPush(t, st, 3, "x")
	st.pop()
	ended("the client took a message", pushQueued)
	ended = waitingPush(t, st, 4, "yyyyy")
	st.detach()
	ended("the client left", pushFull) // as for any unopened stream
	st.attach()
	ended = waitingPush(t, st, 4, "yyyyy")
	st.close()
	ended("the stream closed", pushClosed)
	if got := st.push(5, []byte("y")); got != pushClosed {
		t.Fatalf("a push to a closed stream: %d, want pushClosed", got)
	}
}

// waitingPush starts a push to st that must wait for room, checks that
// it is still waiting after 200 ms, and returns what checks, once
// something should have woken it, that it ended with want.
func waitingPush(t *testing.T, st *outStream, seq uint64, msg string) (ended func(what string, want pushResult)) {
	t.Helper()
	pushed := make(chan pushResult, 1)
	go func() { pushed <- st.push(seq, []byte(msg)) }() // ends when the stream has room, or at detach or close
	select {
	case got := <-pushed:
		t.Fatalf("a push beyond the bound of an open stream returned %d before anything made room", got)
	case <-time.After(200 * time.Millisecond):
	}
	return func(what string, want pushResult) {
		t.Helper()
		select {
		case got := <-pushed:
			if got != want {
				t.Fatalf("the waiting push, once %s: %d, want %d", what, got, want)
			}
		case <-time.After(netkit.CondWait):
			t.Fatalf("the waiting push did not end once %s", what)
		}
	}
}

// TestOutStreamTakesOneHugeMessage checks that a message larger than the
// bound goes when the open stream's queue is empty: the bound limits
// what waits, never a message's size.
func TestOutStreamTakesOneHugeMessage(t *testing.T) {
	st := newOutStream("", newStreamBudget(10), newOrderGate())
	st.attach()
	if got := st.push(1, make([]byte, 100)); got != pushQueued {
		t.Fatalf("a 100-byte message on an empty open stream bounded at 10: %d, want pushQueued", got)
	}
}

// TestOutStreamsShareTheBound checks that a connection's streams count
// against one bound: an unopened stream drops what would take them past
// it, an open one waits for its own client, and a stream closed unread
// gives its share back.
func TestOutStreamsShareTheBound(t *testing.T) {
	gate, budget := newOrderGate(), newStreamBudget(10)
	a, b := newOutStream("a", budget, gate), newOutStream("b", budget, gate)
	if a.push(1, []byte("123456")) != pushQueued {
		t.Fatal("a push within the bound refused")
	}
	if got := b.push(2, []byte("78901")); got != pushFull {
		t.Fatalf("a push taking two unopened streams past their bound: %d, want pushFull", got)
	}
	b.attach()
	if got := b.push(2, []byte("78901")); got != pushQueued {
		t.Fatalf("a push to an open stream with nothing queued: %d, want pushQueued", got)
	}
	ended := waitingPush(t, b, 3, "x") // past the connection's bound, b's client has taken nothing yet
	b.pop()
	ended("its client took a message", pushQueued)
	a.close()
	if held := budget.held.Load(); held != 1 {
		t.Fatalf("after closing the unread stream the connection holds %d bytes, want 1 (b's)", held)
	}
	if got := newOutStream("c", budget, gate).push(4, []byte("123456789")); got != pushQueued {
		t.Fatalf("a push within what the closed stream gave back: %d, want pushQueued", got)
	}
}

// TestStreamBudgetAccounting drives a connection's streams through
// random pushes, writes, attaches, detaches and closes, and checks after
// every step that the connection's count is exactly what its live
// streams hold, so no byte is given back twice or never; once every
// stream is closed and left, the count is zero.
func TestStreamBudgetAccounting(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		r := rand.New(rand.NewPCG(seed, 0))
		gate, budget := newOrderGate(), newStreamBudget(1000)
		var streams []*outStream
		for i := range 4 {
			streams = append(streams, newOutStream(string(rune('a'+i)), budget, gate))
		}
		var seq uint64
		for step := range 2000 {
			st := streams[r.IntN(len(streams))]
			switch op := r.IntN(6); {
			case op <= 1:
				n := 1 + r.IntN(300)
				st.mu.Lock()
				waits := st.attached && !st.closed && st.over(n)
				st.mu.Unlock()
				if !waits { // a push that would wait needs a reader this test does not have
					seq++
					st.push(seq, make([]byte, n))
				}
			case op == 2:
				if _, ok := st.peek(); ok && st.attached {
					st.pop()
				}
			case op == 3:
				st.attach()
			case op == 4:
				if st.attached {
					st.detach()
				}
			case op == 5 && r.IntN(8) == 0:
				st.close()
			}
			var held int
			for _, o := range streams {
				o.mu.Lock()
				if o.queued < 0 {
					t.Fatalf("seed %d step %d: stream %s holds %d bytes", seed, step, o.session, o.queued)
				}
				held += o.queued
				if o.closed && !o.attached && o.queued != 0 {
					t.Fatalf("seed %d step %d: stream %s was closed and left still holding %d bytes", seed, step, o.session, o.queued)
				}
				o.mu.Unlock()
			}
			if got := int(budget.held.Load()); got != held {
				t.Fatalf("seed %d step %d: the connection counts %d bytes, its streams hold %d", seed, step, got, held)
			}
		}
		for _, o := range streams {
			o.close()
			if o.attached {
				o.detach()
			}
		}
		if got := budget.held.Load(); got != 0 {
			t.Fatalf("seed %d: %d bytes still counted after every stream closed and was left", seed, got)
		}
	}
}

// TestServeCORS checks that an allowed browser origin gets its preflight
// answered and can read Acp-Connection-Id, and a foreign one gets 403.
func TestServeCORS(t *testing.T) {
	f := startServe(t, netkit.H1, func(o *ServeOptions) { o.AllowOrigins = []string{"http://app.example"} })
	resp := f.do(t, "OPTIONS", "", "Origin", "http://app.example", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type, acp-connection-id")
	netkit.ReadAll(t, resp.Body)
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "acp-connection-id") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp = f.do(t, "POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, "Origin", "http://app.example", "Content-Type", netkit.CTJSON)
	netkit.ReadAll(t, resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), acphttp.HeaderConnectionID) {
		t.Fatalf("allowed origin: %d %v", resp.StatusCode, resp.Header)
	}
	resp = f.do(t, "OPTIONS", "", "Origin", "http://evil.example", "Access-Control-Request-Method", "POST")
	netkit.ReadAll(t, resp.Body)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign preflight: %d", resp.StatusCode)
	}
}

// TestServeNoGoroutineLeak runs a connection over HTTP and one over
// WebSocket, closes everything, and checks that the goroutines are gone.
func TestServeNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		srv, err := NewServer(ServeOptions{Argv: agentArgv("acp"), Agent: agent.Options{Grace: 200 * time.Millisecond},
			KeepAlive: 20 * time.Millisecond, Stderr: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		f := &serveFixture{srv: srv, http: hs, rec: &netkit.Recorder{}, c: hs.Client(), url: hs.URL + "/acp"}
		conn := f.initialize(t)
		events, resp := f.openStream(t, conn, "")
		next(t, events) // a keep-alive
		resp.Body.Close()
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(f.url, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`))
		ws.ReadMessage()
		ws.Close()
		srv.Close()
		hs.CloseClientConnections()
		hs.Close()
		hs.Client().CloseIdleConnections()
	}()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
