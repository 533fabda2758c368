package bridge

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/door"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// DefaultKeepAlive is how often serve writes a keep-alive comment on a
// quiet SSE stream, so idle proxies and load balancers keep it open, and
// pings a WebSocket client, letting go of one that answers nothing for
// acphttp.PeerMissedPings intervals.
const DefaultKeepAlive = 15 * time.Second

// ServeOptions configure Server, which exposes a stdio agent as a remote
// ACP agent over Streamable HTTP and WebSocket (the draft RFD).
type ServeOptions struct {
	// Argv is the agent's command line; one process per connection.
	Argv  []string
	Agent agent.Options
	// Path is the endpoint (default "/acp").
	Path string
	// Recorder receives every message as the client saw it, and the
	// agents' stderr (each connection's as capture.StreamStderr of its
	// connection number); nil records nothing.
	Recorder tap.Recorder
	// Intercept, when set, sees every whole message at each agent's stdio
	// and decides what is delivered (a fault plan, messages held or sent
	// by hand). Nil, the default, carries messages as they come.
	Intercept tap.Interceptor
	// Listen, AllowHosts, AllowOrigins and AuthToken are the guard's
	// (see door.GuardOptions): the listener's addresses, further Host values
	// and browser origins allowed, and the bearer token required.
	Listen       []string
	AllowHosts   []string
	AllowOrigins []string
	AuthToken    string
	// KeepAlive is the interval of keep-alive comments on SSE streams
	// and of pings on WebSockets; 0 means DefaultKeepAlive, negative
	// disables both.
	KeepAlive time.Duration
	// StreamBuffer bounds the bytes a connection's streams hold together,
	// whether or not a client has them open (default and behaviour:
	// DefaultStreamBuffer).
	StreamBuffer int
	// SessionWait is how long a GET for a session nothing has named yet
	// waits for a session/load, session/resume or session/new to name it
	// before its stream ends (0 means DefaultSessionWait).
	SessionWait time.Duration
	// DisconnectGrace is how long a connection outlives its ended
	// connection-scoped GET stream (0 means DefaultDisconnectGrace,
	// negative keeps it until DELETE).
	DisconnectGrace time.Duration
	// Stderr receives the agents' stderr and serve's warnings (default
	// os.Stderr).
	Stderr io.Writer
	// MaxMessageSize bounds a POST body or WebSocket message (0 means
	// acphttp.DefaultMaxMessageSize): a longer one gets 413 or a 1009 close.
	MaxMessageSize int64
	// MaxConns caps open connections, each an agent process (0 means
	// DefaultMaxConns, negative means no cap): initialize beyond it gets
	// 503 with Retry-After.
	MaxConns int
	// IdleTimeout closes a connection with no stream open that sends
	// nothing and is not deleted for that long (0 means
	// DefaultIdleTimeout, negative never).
	IdleTimeout time.Duration
}

// Server is serve's HTTP handler. Close ends every connection.
//
// Concurrency: each connection owns three goroutines, the stdout reader
// (routes agent messages to streams, ends at stdout EOF), the stderr
// reader (ends at stderr EOF) and the exit watcher (ends when the agent
// exits or the connection closes), and an idle timer whose function runs
// briefly when it fires. Each open GET stream is written by its own
// handler goroutine; a WebSocket connection adds a closer goroutine and,
// with keep-alives on, a pinger (acphttp.WatchPeer), both ending with the
// connection. A session stream opened before its session is
// named holds a wait timer (time.AfterFunc) that ends the stream when
// nothing names the session in time; naming it, or the connection's
// teardown, stops the timer. Tearing a connection down closes its streams
// and runs the agent's shutdown ladder in one more goroutine, which ends
// when the agent has exited and both readers have ended (closing our
// pipe ends if something the agent left behind holds them); only then is
// the connection's slot free. Close waits for those.
type Server struct {
	opts     ServeOptions
	messages tap.Recorder // under interception: the recorder the ports record messages to
	guard    *door.Guard
	nums     acphttp.ConnTable
	upgrader websocket.Upgrader

	mu      sync.Mutex
	conns   map[string]*serveConn
	agents  int            // connection slots taken: agents running or stopping
	running sync.WaitGroup // one per slot taken; Close waits for them all
	closed  bool

	errMu sync.Mutex // serializes lines on Stderr
}

// NewServer checks the options and returns the handler.
func NewServer(opts ServeOptions) (*Server, error) {
	if len(opts.Argv) == 0 {
		return nil, fmt.Errorf("no agent command: give it after --, e.g. acpscope serve -- my-agent --acp")
	}
	if opts.Path == "" {
		opts.Path = "/acp"
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = acphttp.DefaultMaxMessageSize
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	opts.Recorder = tap.Or(opts.Recorder)
	var messages tap.Recorder // under interception, the ports record messages
	if opts.Intercept != nil {
		messages, opts.Recorder = opts.Recorder, statusOnly{opts.Recorder}
	}
	guard, err := door.NewGuard(door.GuardOptions{Name: "serve", Listen: opts.Listen, AllowHosts: opts.AllowHosts,
		AllowOrigins: opts.AllowOrigins, AuthToken: opts.AuthToken})
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, messages: messages, guard: guard, conns: map[string]*serveConn{}}
	s.upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true },
		ReadBufferSize: acphttp.WSBufferSize, WriteBufferSize: acphttp.WSBufferSize, WriteBufferPool: acphttp.WSWriteBuffers}
	return s, nil
}

// ServeHTTP implements the RFD's routing on the endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != s.opts.Path {
		http.NotFound(w, r)
		return
	}
	// Host and Origin before anything else, the token after the
	// preflight (which carries none): no agent starts for a refused
	// request.
	if ref := s.guard.Admit(r); ref != nil {
		s.refuse(w, r, ref)
		return
	}
	if s.cors(w, r) {
		return // a preflight, answered
	}
	if ref := s.guard.Authorize(r); ref != nil {
		s.refuse(w, r, ref)
		return
	}
	switch {
	case r.Method == http.MethodPost:
		s.servePOST(w, r)
	case r.Method == http.MethodGet && websocket.IsWebSocketUpgrade(r):
		s.serveWS(w, r)
	case r.Method == http.MethodGet:
		s.serveGET(w, r)
	case r.Method == http.MethodDelete:
		s.serveDELETE(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		s.answer(w, r, 0, http.StatusMethodNotAllowed, "use POST, GET or DELETE")
	}
}

// cors lets a page from an origin allowed with --allow-origin use the
// endpoint from a browser: it answers the preflight (an OPTIONS before a
// JSON POST) and lets the page read the Acp-* headers. It reports whether
// the request was a preflight and has been answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Expose-Headers", acphttp.HeaderConnectionID+", "+acphttp.HeaderSessionID)
	h.Add("Vary", "Origin")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// refuse answers and records a request the guard turned away.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, ref *door.Refusal) {
	ref.SetHeaders(w.Header())
	s.answer(w, r, 0, ref.Status, ref.Reason)
}

// answer writes a status with a short text body (empty for 202) and
// records it as a status-only exchange on connection conn.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, conn uint32, status int, msg string) {
	body := ""
	if msg != "" {
		body = "acpscope serve: " + msg + "\n"
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
	s.opts.Recorder.Frame(conn, wire.DirAgent, tap.Now(), []byte(body), 0, s.envelope(r, wire.StreamHTTPControl, status, w.Header()))
}

// envelope describes a frame of request r; h are the headers to keep
// (the request's for client frames, ours for responses, to which the
// request's are added as the proxy does).
func (s *Server) envelope(r *http.Request, stream string, status int, h http.Header) *wire.Envelope {
	env := &wire.Envelope{
		Method: r.Method, Path: r.URL.Path, Proto: r.Proto, Status: status, Stream: stream,
		ConnectionID: r.Header.Get(acphttp.HeaderConnectionID), SessionID: r.Header.Get(acphttp.HeaderSessionID),
	}
	switch {
	case h == nil:
	case stream == wire.StreamPOST:
		env.Headers = acphttp.EnvelopeHeaders(h)
	default:
		env.Headers = acphttp.ResponseHeaders(h, r.Header)
	}
	if env.ConnectionID == "" && h != nil {
		env.ConnectionID = h.Get(acphttp.HeaderConnectionID)
	}
	return env
}

// addConn makes c findable by its id; it reports false once Close has
// begun, whose snapshot of the connections c would have missed.
func (s *Server) addConn(c *serveConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c.id] = c
	return true
}

func (s *Server) removeConn(c *serveConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c.id)
}

func (s *Server) lookup(id string) *serveConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[id]
}

// Conns returns how many connections (agent processes) are open.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Close tears down every connection and waits for their agents to exit
// (each through the shutdown ladder) and their output to be drained.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	conns := make([]*serveConn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	s.running.Wait()
	return nil
}

func (s *Server) warn(msg string) {
	s.stderrLine([]byte("acpscope serve: " + msg + "\n"))
}

func (s *Server) stderrLine(line []byte) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	s.opts.Stderr.Write(line)
}

// setConnCookie sets the affinity cookie the RFD asks clients to return.
func setConnCookie(h http.Header, id string) {
	h.Add("Set-Cookie", (&http.Cookie{Name: "acp_conn", Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}).String())
}
