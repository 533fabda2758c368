package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/door"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/gorilla/websocket"
)

// HTTPProxyOptions configure a reverse proxy in front of a remote agent.
type HTTPProxyOptions struct {
	// Upstream is the agent's endpoint, e.g. http://127.0.0.1:7331/acp.
	Upstream string
	// Path is our endpoint; requests to it are recorded and sent to
	// Upstream's path. Other paths (/health) go to the same path upstream,
	// unrecorded. Default: Upstream's path, or "/acp".
	Path string
	// Recorder receives every message; nil records nothing.
	Recorder tap.Recorder
	// Intercept, when set, sees every message on our endpoint (POST
	// bodies, SSE events, JSON replies, WebSocket text messages) and
	// decides what is delivered (a fault plan, messages held or sent by
	// hand). Nil, the default, carries bytes as they come.
	Intercept tap.Interceptor
	// Listen, AllowHosts, AllowOrigins and AuthToken are the guard's
	// (see door.GuardOptions): the listener's addresses, further Host values
	// and browser origins allowed, and the bearer token required.
	Listen       []string
	AllowHosts   []string
	AllowOrigins []string
	AuthToken    string
	// UpstreamAuthToken, when set, replaces the client's Authorization
	// towards the upstream with "Bearer TOKEN"; otherwise the client's
	// passes unchanged (see forUpstream).
	UpstreamAuthToken string
	// UnsafeUpstreamInsecure skips TLS verification of an https upstream.
	UnsafeUpstreamInsecure bool
	// UpstreamProtocol picks the protocol towards an http:// upstream:
	// "auto" (or "") speaks what the client spoke, cleartext HTTP/2 to an
	// h2c client and HTTP/1.1 otherwise; "http1" and "h2c" force one.
	// https:// upstreams negotiate through TLS either way.
	UpstreamProtocol string
	// MaxMessageSize bounds a request body or WebSocket message on the
	// endpoint (0 means acphttp.DefaultMaxMessageSize): a longer one gets 413 or
	// a 1009 close and never reaches the upstream.
	MaxMessageSize int64
	// Warn hears what the proxy must say while it runs (a message under
	// interception it could not deliver); nil discards.
	Warn func(string)
	// MaxInFlight caps requests in flight, open SSE streams and
	// WebSockets included (0 means DefaultMaxInFlight, negative means no
	// cap); beyond it a request gets 503 with Retry-After.
	MaxInFlight int
}

// DefaultMaxInFlight caps the proxy's requests in flight. Each holds a
// goroutine, a socket on each side and up to one message; an editor keeps
// a handful open (a connection stream, one per session, a POST or two), so
// 256 is room for dozens of editors and still bounds sockets and memory.
const DefaultMaxInFlight = 256

// HTTPProxy is a recording reverse proxy for ACP over Streamable HTTP and
// WebSocket. It forwards bytes unchanged and records a parsed copy.
//
// Concurrency: every request runs on the goroutine net/http gives it; the
// response is written there and tapped before each write, and the request
// body is tapped on whichever goroutine the transport reads it from
// (bodyTap locks). A WebSocket adds two pump goroutines, one per
// direction, that end when either side closes; Close closes the sockets.
type HTTPProxy struct {
	upstream *url.URL
	path     string
	rec      tap.Recorder
	guard    *door.Guard
	// intercept acts on every connection; nil without one. icConns
	// holds the Streamable HTTP connections' state under it.
	intercept tap.Interceptor
	icConns   map[uint32]*httpConn
	icMu      sync.Mutex
	upToken   string // UpstreamAuthToken
	proto     string // UpstreamProtocol
	conns     acphttp.ConnTable

	warn        func(string) // Warn, never nil
	maxMessage  int64        // MaxMessageSize
	maxInFlight int          // MaxInFlight
	inFlight    atomic.Int64

	h1, h2c   *http.Transport        // HTTP/1.1 (and h2 over TLS); cleartext HTTP/2
	rp1, rp2c *httputil.ReverseProxy // one per transport
	dialer    *websocket.Dialer      // upstream leg of WebSockets
	upgrader  websocket.Upgrader     // client leg of WebSockets
	wsConns   map[io.Closer]int      // open WebSockets' sockets, closed by Close
	wsClosed  bool                   // Close has run: no socket is kept open
	wsMu      sync.Mutex

	// held counts the pooled buffers in use, lent to the capture or not
	// (http_events.go, ws_msgbuf.go): tests check that all come back.
	held struct{ readChunks, msgBufs atomic.Int64 }
}

// NewHTTPProxy checks the options and builds the proxy.
func NewHTTPProxy(opts HTTPProxyOptions) (*HTTPProxy, error) {
	u, err := parseUpstream(opts.Upstream)
	if err != nil {
		return nil, err
	}
	switch opts.UpstreamProtocol {
	case "", "auto", "http1", "h2c":
	default:
		return nil, fmt.Errorf("%w: upstream protocol %q: want auto, http1 or h2c", ErrUpstreamURL, opts.UpstreamProtocol)
	}
	guard, err := door.NewGuard(door.GuardOptions{Name: "proxy", Listen: opts.Listen, AllowHosts: opts.AllowHosts,
		AllowOrigins: opts.AllowOrigins, AuthToken: opts.AuthToken})
	if err != nil {
		return nil, err
	}
	p := &HTTPProxy{upstream: u, path: opts.Path, rec: tap.Or(opts.Recorder), guard: guard, intercept: opts.Intercept,
		upToken: opts.UpstreamAuthToken, proto: opts.UpstreamProtocol,
		maxMessage: opts.MaxMessageSize, maxInFlight: opts.MaxInFlight}
	if p.maxMessage <= 0 {
		p.maxMessage = acphttp.DefaultMaxMessageSize
	}
	if p.warn = opts.Warn; p.warn == nil {
		p.warn = func(string) {}
	}
	if p.maxInFlight == 0 {
		p.maxInFlight = DefaultMaxInFlight
	}
	if p.path == "" {
		p.path = u.Path
	}
	if p.path == "" || p.path == "/" {
		p.path = "/acp"
	}
	p.h1, p.h2c = acphttp.NewTransports(opts.UnsafeUpstreamInsecure)
	p.rp1, p.rp2c = p.newReverseProxy(p.h1), p.newReverseProxy(p.h2c)
	p.dialer = &websocket.Dialer{
		Proxy:            nil,
		TLSClientConfig:  acphttp.TLSClientConfig(opts.UnsafeUpstreamInsecure),
		HandshakeTimeout: p.h1.TLSHandshakeTimeout,
		ReadBufferSize:   acphttp.WSBufferSize,
		WriteBufferSize:  acphttp.WSBufferSize,
		WriteBufferPool:  acphttp.WSWriteBuffers,
	}
	p.upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true },
		ReadBufferSize: acphttp.WSBufferSize, WriteBufferSize: acphttp.WSBufferSize, WriteBufferPool: acphttp.WSWriteBuffers}
	p.wsConns = map[io.Closer]int{}
	return p, nil
}

// parseUpstream accepts http and https URLs (and ws, wss as their
// aliases) and returns the http form.
func parseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w %q: want a URL such as http://127.0.0.1:7331/acp", ErrUpstreamURL, raw)
	}
	switch u.Scheme {
	case "http", "https":
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return nil, fmt.Errorf("%w %q: the scheme must be http, https, ws or wss", ErrUpstreamURL, raw)
	}
	return u, nil
}

func (p *HTTPProxy) newReverseProxy(t http.RoundTripper) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      t,
		FlushInterval:  -1, // every write reaches the client at once
		ErrorHandler:   p.upstreamError,
		ModifyResponse: takeEvents,
		ErrorLog:       log.New(io.Discard, "", 0),
	}
}

// rewrite points a request at the upstream: our endpoint maps to the
// upstream's endpoint, any other path to the same path there.
func (p *HTTPProxy) rewrite(pr *httputil.ProxyRequest) {
	out := pr.Out.URL
	out.Scheme, out.Host = p.upstream.Scheme, p.upstream.Host
	if pr.In.URL.Path == p.path {
		out.Path, out.RawPath = p.upstream.Path, p.upstream.RawPath
		out.RawQuery = joinQuery(p.upstream.RawQuery, pr.In.URL.RawQuery)
	} else {
		out.RawQuery = pr.In.URL.RawQuery
	}
	pr.Out.Host = ""
	p.forUpstream(pr.Out.Header, pr.In)
	if ex, _ := pr.In.Context().Value(exchangeKey{}).(*exchange); ex != nil && ex.body != nil && pr.Out.Body != nil {
		// ReverseProxy's wrapper of the body stops reads once ServeHTTP
		// returns, which for an event stream the handler relays itself is
		// before the upstream need have read the body (HTTP/2 lets it
		// answer first). The tap's own reads end with the exchange.
		pr.Out.Body = ex.body
	}
}

func joinQuery(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "&" + b
}

// Path returns the endpoint the proxy records.
func (p *HTTPProxy) Path() string { return p.path }

// ServeHTTP routes a request: our endpoint is recorded (WebSocket
// upgrades included), other paths pass through unrecorded. The guard
// goes first, on every path: nothing it refuses reaches the upstream.
func (p *HTTPProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ref := p.guard.Check(r); ref != nil {
		p.refuse(w, r, ref)
		return
	}
	if !p.enter() {
		p.refuseBusy(w, r)
		return
	}
	defer p.leave()
	if r.URL.Path != p.path {
		p.reverseProxy(r).ServeHTTP(w, r)
		return
	}
	if websocket.IsWebSocketUpgrade(r) {
		p.serveWebSocket(w, r)
		return
	}
	if p.intercept != nil {
		acphttp.ReleaseMemory(p.serveIntercepted(w, r))
		return
	}
	acphttp.ReleaseMemory(p.serveRecorded(w, r))
}

// enter counts a request in flight; it reports false at the cap.
func (p *HTTPProxy) enter() bool {
	if n := p.inFlight.Add(1); p.maxInFlight > 0 && n > int64(p.maxInFlight) {
		p.inFlight.Add(-1)
		return false
	}
	return true
}

func (p *HTTPProxy) leave() { p.inFlight.Add(-1) }

// InFlight returns how many requests the proxy is handling.
func (p *HTTPProxy) InFlight() int { return int(p.inFlight.Load()) }

// refuseBusy answers 503 beyond --max-in-flight, recorded on our endpoint.
func (p *HTTPProxy) refuseBusy(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == p.path {
		ex := p.newExchange(r)
		defer ex.finish(false)
		w = &tapWriter{ResponseWriter: w, ex: ex, conns: &p.conns, limit: p.maxMessage}
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(acphttp.RetryAfter/time.Second)))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, "acpscope: requests in flight at the --max-in-flight cap (%d); retry later or raise --max-in-flight\n", p.maxInFlight)
}

// reverseProxy picks the transport matching the client's protocol, so an
// h2c client meets an h2c upstream and an HTTP/1.1 client an HTTP/1.1 one.
func (p *HTTPProxy) reverseProxy(r *http.Request) *httputil.ReverseProxy {
	if p.upstream.Scheme != "http" {
		return p.rp1
	}
	switch p.proto {
	case "h2c":
		return p.rp2c
	case "http1":
		return p.rp1
	}
	if r.ProtoMajor == 2 && r.TLS == nil {
		return p.rp2c
	}
	return p.rp1
}

// upstreamError answers 502 with a body that says what went wrong; the
// tap records it like any other response.
func (p *HTTPProxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if tw, ok := w.(*tapWriter); ok && tw.ex.body != nil && tw.ex.body.exceeded() {
		p.tooBig(w, -1) // the body crossed the limit on its way
		return
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away; nobody to answer
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "acpscope: %s\n", describeUpstreamError(p.upstream, err))
}

// describeUpstreamError says in one line why the upstream failed.
func describeUpstreamError(u *url.URL, err error) string {
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("upstream %s unreachable: connection refused", u)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Sprintf("upstream %s unreachable: %v", u, innermost(err))
	}
	return fmt.Sprintf("upstream %s failed: %v", u, err)
}

func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// Close closes idle upstream connections and open WebSockets, and
// delivers what interception still holds. Open SSE
// streams end when the http.Server serving the proxy shuts down.
func (p *HTTPProxy) Close() error {
	p.h1.CloseIdleConnections()
	p.h2c.CloseIdleConnections()
	p.icMu.Lock()
	var conns []uint32
	for c := range p.icConns {
		conns = append(conns, c)
	}
	p.icMu.Unlock()
	for _, c := range conns {
		p.forget(c)
	}
	p.wsMu.Lock()
	defer p.wsMu.Unlock()
	p.wsClosed = true
	for c := range p.wsConns {
		c.Close()
	}
	return nil
}
