package netkit

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/acpscope/acpscope/internal/acphttp"
)

// FakeUpstream plays three server dialects on three paths and keeps every
// byte it wrote to each response, so tests can byte-compare with what the
// client received through the proxy:
//
//	/acp      the RFD: initialize → 200 JSON + Acp-Connection-Id, other
//	          POSTs → 202 with the reply on the GET stream
//	/goose    goose's older design: Acp-Session-Id as the connection id,
//	          every POST answered with an SSE stream
//	/v1/rpc   rivet: GET streams resumed with Last-Event-ID
type FakeUpstream struct {
	mu     sync.Mutex
	sent   map[string]*bytes.Buffer // by response: "POST 1", "GET"
	posts  int
	queue  chan string // replies for the RFD GET stream
	protos []int       // ProtoMajor of each request
}

// NewFakeUpstream returns an upstream with nothing sent yet.
func NewFakeUpstream() *FakeUpstream {
	return &FakeUpstream{sent: map[string]*bytes.Buffer{}, queue: make(chan string, 16)}
}

// write sends b on a response and keeps a copy under key.
func (u *FakeUpstream) write(w http.ResponseWriter, key string, b string) {
	u.mu.Lock()
	buf := u.sent[key]
	if buf == nil {
		buf = &bytes.Buffer{}
		u.sent[key] = buf
	}
	buf.WriteString(b)
	u.mu.Unlock()
	io.WriteString(w, b)
	http.NewResponseController(w).Flush()
}

// SentOn returns what the upstream wrote on the response named key:
// "POST initialize", "POST 1" (goose's first POST), "GET".
func (u *FakeUpstream) SentOn(key string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if b := u.sent[key]; b != nil {
		return b.String()
	}
	return ""
}

// Protos returns the HTTP major version of each request so far.
func (u *FakeUpstream) Protos() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]int(nil), u.protos...)
}

// ServeHTTP routes by path: /health, /acp, /goose and /v1/rpc.
func (u *FakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.protos = append(u.protos, r.ProtoMajor)
	u.mu.Unlock()
	switch r.URL.Path {
	case "/health":
		io.WriteString(w, "ok")
	case "/acp":
		u.rfd(w, r)
	case "/goose":
		u.goose(w, r)
	case "/v1/rpc":
		u.rivet(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (u *FakeUpstream) rfd(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		id := idOf(string(body))
		if strings.Contains(string(body), `"initialize"`) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set(acphttp.HeaderConnectionID, "conn-1")
			w.Header().Add("Set-Cookie", "sticky=node-7; Path=/")
			u.write(w, "POST initialize", `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":1}}`)
			return
		}
		if r.Header.Get(acphttp.HeaderConnectionID) != "conn-1" || r.Header.Get("Cookie") != "sticky=node-7" {
			http.Error(w, "unknown connection", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		if id != "" {
			// A reply with a CRLF inside the JSON, to prove bytes are
			// not re-encoded.
			u.queue <- `{"jsonrpc":"2.0",` + "\r\n" + `"id":` + id + `,"result":{"sessionId":"s1"}}`
		}
	case http.MethodGet:
		if r.Header.Get(acphttp.HeaderConnectionID) != "conn-1" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.Header.Get(acphttp.HeaderSessionID) != "" {
			http.Error(w, "no session streams here", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		u.write(w, "GET", ": keep-alive\r\n\r\n")
		n := 0
		for {
			select {
			case msg, ok := <-u.queue:
				if !ok {
					return
				}
				n++
				lines := strings.Split(msg, "\r\n")
				ev := fmt.Sprintf("id: %d\r\n", n)
				for _, l := range lines {
					ev += "data:" + l + "\r\n"
				}
				u.write(w, "GET", ev+"\r\n")
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodDelete:
		w.WriteHeader(http.StatusAccepted)
		close(u.queue)
	}
}

func (u *FakeUpstream) goose(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id := idOf(string(body))
	u.mu.Lock()
	u.posts++
	key := fmt.Sprintf("POST %d", u.posts)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set(acphttp.HeaderSessionID, "goose-sess")
	u.write(w, key, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notice\"}\n\n")
	u.write(w, key, "event: message\ndata: {\"jsonrpc\":\"2.0\",\n")
	u.write(w, key, "data: \"id\":"+id+",\"result\":{}}\n\n")
}

func (u *FakeUpstream) rivet(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	last := r.Header.Get("Last-Event-ID")
	w.Header().Set("Content-Type", "text/event-stream")
	u.write(w, "GET", "retry: 1000\n\n")
	u.write(w, "GET", "id: 6\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"after\",\"params\":{\"last\":\""+last+"\"}}\n\n")
	u.write(w, "GET", "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"cut\"") // cut off: no blank line
}

// idOf pulls the raw id out of a small JSON-RPC message.
func idOf(msg string) string {
	i := strings.Index(msg, `"id":`)
	if i < 0 {
		return ""
	}
	rest := msg[i+5:]
	end := strings.IndexAny(rest, ",}")
	return rest[:end]
}
