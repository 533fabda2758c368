package netkit

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/gorilla/websocket"
)

// Probe is one request a web page could make (through DNS rebinding, or
// from another site) or a client without the right token. In host and
// origin, PORT stands for the listener's port; host "" is the
// listener's own address.
type Probe struct {
	Method string // POST, GET (an SSE stream), DELETE or WS (an upgrade)
	Host   string
	Origin string
	Token  string
}

// NewProbe returns the probe of a request.
func NewProbe(method, host, origin, token string) Probe {
	return Probe{Method: method, Host: host, Origin: origin, Token: token}
}

// The Host and Origin of a page from elsewhere, and the token the tests'
// listeners require.
const (
	EvilHost   = "evil.example:PORT"
	EvilOrigin = "http://evil.example:PORT"
	GoodToken  = "tok-guard"
)

// Send makes the request to base (http://HOST:PORT) and returns the
// status and body; a WebSocket that opened is closed at once.
func (p Probe) Send(t *testing.T, base string) (int, string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	h := http.Header{}
	if p.Origin != "" {
		h.Set("Origin", strings.ReplaceAll(p.Origin, "PORT", port))
	}
	if p.Token != "" {
		h.Set("Authorization", "Bearer "+p.Token)
	}
	host := strings.ReplaceAll(p.Host, "PORT", port)
	if p.Method == "WS" {
		if host != "" {
			h.Set("Host", host) // the dialer sends it as the request's Host
		}
		c, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/acp", h)
		if err == nil {
			c.Close()
			return resp.StatusCode, ""
		}
		if resp == nil {
			t.Fatalf("WebSocket to %s: %v", base, err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, ReadAll(t, resp.Body)
	}
	var body io.Reader
	switch p.Method {
	case "POST":
		body = strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
		h.Set("Content-Type", CTJSON)
	case "GET":
		h.Set("Accept", "text/event-stream")
		h.Set(acphttp.HeaderConnectionID, "no-such-connection")
	case "DELETE":
		h.Set(acphttp.HeaderConnectionID, "no-such-connection")
	}
	req, _ := http.NewRequest(p.Method, base+"/acp", body)
	req.Header = h
	if host != "" {
		req.Host = host
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", p.Method, base, err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, ReadAll(t, resp.Body)
}

// Refused is a request every listener must refuse, with the status and
// what the refusal must name.
type Refused struct {
	Name string
	P    Probe
	Want int
	Says string
}

// RefusedProbes are the requests every listener must refuse: from a
// rebound name, from another site's page, and without the token, for
// each kind of request.
func RefusedProbes() []Refused {
	type row = Refused
	var rows []row
	for _, m := range []string{"POST", "GET", "DELETE", "WS"} {
		rows = append(rows,
			row{m + " rebinding", NewProbe(m, EvilHost, EvilOrigin, GoodToken), 403, `Host "evil.example:`},
			row{m + " rebound Host", NewProbe(m, EvilHost, "", GoodToken), 403, "--allow-host evil.example"},
			row{m + " another site", NewProbe(m, "", EvilOrigin, GoodToken), 403, "--allow-origin http://evil.example:"},
			row{m + " no token", NewProbe(m, "", "", ""), 401, "missing or wrong bearer token"},
			row{m + " wrong token", NewProbe(m, "", "", "tok-wrong"), 401, "missing or wrong bearer token"},
		)
	}
	return append(rows, row{"POST null origin", NewProbe("POST", "", "null", GoodToken), 403, `Origin "null"`})
}
