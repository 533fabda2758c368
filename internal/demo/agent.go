package demo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"sync"
	"time"
)

// AgentName is the name the demo agent gives in initialize's agentInfo.
const AgentName = "acpscope-demo-agent"

// Version is the demo peers' version, sent in agentInfo and clientInfo.
const Version = "1.0.0"

// Mutations RunAgent knows (AgentOptions.Mutate). Each is one deliberate,
// documented change to what the agent sends, so that replay and diff
// tests can prove they notice it.
const (
	MutateNone  = ""
	MutateTitle = "title" // a different session title and one changed message chunk in the first turn
	MutateExtra = "extra" // one extra agent_message_chunk at the end of every turn
	MutateDrop  = "drop"  // the usage_update of every turn is left out
)

// Session id schemes (AgentOptions.SessionScheme).
const (
	SchemeCounter = "counter" // sess_1, sess_2, … (the default)
	SchemeUUID    = "uuid"    // random version 4 UUIDs
)

// AgentOptions tune the demo agent. The zero value is a fast,
// deterministic agent with counter session ids.
type AgentOptions struct {
	SessionScheme string        // SchemeCounter (default) or SchemeUUID
	Mutate        string        // one of the Mutate constants
	Delay         time.Duration // pause between streamed chunks; 0 streams at once
	Log           io.Writer     // stderr-style log lines; nil discards
}

func (o AgentOptions) check() error {
	switch o.SessionScheme {
	case "", SchemeCounter, SchemeUUID:
	default:
		return fmt.Errorf("session scheme %q (want %s or %s): %w", o.SessionScheme, SchemeCounter, SchemeUUID, ErrOption)
	}
	switch o.Mutate {
	case MutateNone, MutateTitle, MutateExtra, MutateDrop:
	default:
		return fmt.Errorf("mutation %q (want %s, %s or %s): %w", o.Mutate, MutateTitle, MutateExtra, MutateDrop, ErrOption)
	}
	return nil
}

// agent is one demo agent serving one connection.
type agent struct {
	opts  AgentOptions
	c     *conn
	turns sync.WaitGroup // running session/prompt turns
	ctx   context.Context

	mu       sync.Mutex
	caps     clientCaps
	sessions map[string]*session
	minted   int
}

// clientCaps is what the client said it can do in initialize.
type clientCaps struct {
	Fs struct {
		ReadTextFile  bool `json:"readTextFile"`
		WriteTextFile bool `json:"writeTextFile"`
	} `json:"fs"`
	Terminal bool `json:"terminal"`
}

// RunAgent serves the demo agent on r (the client's messages) and w (the
// agent's messages) until r ends, then waits for running turns to stop
// and returns nil. It returns an error when the client breaks the
// protocol in a way an agent cannot answer (a response to an id the
// agent never sent) or when ctx ends.
func RunAgent(parent context.Context, r io.Reader, w io.Writer, opts AgentOptions) error {
	if err := opts.check(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	a := &agent{opts: opts, ctx: ctx, sessions: map[string]*session{}}
	a.c = newConn(r, w, handlers{request: a.request, notify: a.notification, lenient: true})
	a.logf("starting (protocol v1, session ids: %s)", a.scheme())
	a.c.start()
	select {
	case <-a.c.done:
	case <-ctx.Done():
		if c, ok := r.(io.Closer); ok {
			a.c.hungUp.Store(true)
			_ = c.Close() // unblocks the reader
		}
	}
	cancel() // input ended: stop running turns; their pending calls fail
	a.turns.Wait()
	<-a.c.done
	if err := a.c.Err(); err != nil {
		a.logf("stopping: %v", err)
		return err
	}
	if err := parent.Err(); err != nil {
		return err
	}
	a.logf("input closed, exiting")
	return nil
}

func (a *agent) logf(format string, args ...any) {
	if a.opts.Log != nil {
		fmt.Fprintf(a.opts.Log, "[%s] "+format+"\n", append([]any{AgentName}, args...)...)
	}
}

func (a *agent) scheme() string {
	if a.opts.SessionScheme == "" {
		return SchemeCounter
	}
	return a.opts.SessionScheme
}

// request answers the client's requests. session/prompt runs on its own
// goroutine; everything else is answered in order on the reader.
func (a *agent) request(id json.RawMessage, method string, params json.RawMessage) {
	if method == "session/prompt" {
		a.turns.Add(1)
		go func() { // turn goroutine; ends with the turn (cancel or input end stop it)
			defer a.turns.Done()
			res, err := a.prompt(params)
			a.answer(id, method, res, err)
		}()
		return
	}
	var res any
	var err error
	switch method {
	case "initialize":
		res, err = a.initialize(params)
	case "session/new":
		res, err = a.newSession(params)
	case "session/load":
		res, err = a.loadSession(params)
	case "authenticate":
		res = struct{}{}
	default:
		err = rpcErrorf(CodeMethodNotFound, "method not found: %s", method)
	}
	a.answer(id, method, res, err)
}

func (a *agent) answer(id json.RawMessage, method string, res any, err error) {
	if err != nil {
		a.logf("%s failed: %v", method, err)
	}
	if werr := a.c.reply(id, res, err); werr != nil {
		a.logf("answering %s: %v", method, werr)
	}
}

// notification handles session/cancel; unknown notifications are ignored
// as the protocol asks.
func (a *agent) notification(method string, params json.RawMessage) error {
	if method != "session/cancel" {
		return nil
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		a.logf("ignoring session/cancel with bad params: %v", err)
		return nil
	}
	if s := a.session(p.SessionID); s != nil {
		a.logf("session %s: cancel requested", p.SessionID)
		s.cancelTurn()
	}
	return nil
}

func (a *agent) initialize(params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion    int        `json:"protocolVersion"`
		ClientCapabilities clientCaps `json:"clientCapabilities"`
	}
	if err := decodeParams("initialize", params, &p); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	a.logf("initialize: client speaks v%d, fs read=%t write=%t terminal=%t", p.ProtocolVersion,
		p.ClientCapabilities.Fs.ReadTextFile, p.ClientCapabilities.Fs.WriteTextFile, p.ClientCapabilities.Terminal)
	// Version negotiation: we speak 1 only, and answer 1 whatever was asked.
	return map[string]any{
		"protocolVersion": 1,
		"agentCapabilities": map[string]any{
			"loadSession":        true,
			"promptCapabilities": map[string]any{"image": true, "audio": false, "embeddedContext": true},
			"mcpCapabilities":    map[string]any{"http": false, "sse": false},
		},
		"authMethods": []any{},
		"agentInfo":   map[string]any{"name": AgentName, "title": "acpscope demo agent", "version": Version},
	}, nil
}

// sessionParams are the fields session/new and session/load share.
type sessionParams struct {
	SessionID  string            `json:"sessionId"`
	Cwd        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

func (p sessionParams) check(method string) error {
	if !path.IsAbs(p.Cwd) {
		return rpcErrorf(CodeInvalidParams, "%s: cwd %q must be an absolute path", method, p.Cwd)
	}
	if p.MCPServers == nil {
		return rpcErrorf(CodeInvalidParams, "%s: mcpServers is required (may be empty)", method)
	}
	return nil
}

func (a *agent) newSession(params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decodeParams("session/new", params, &p); err != nil {
		return nil, err
	}
	if err := p.check("session/new"); err != nil {
		return nil, err
	}
	id := a.mintSessionID()
	a.mu.Lock()
	a.sessions[id] = newSession(id, p.Cwd)
	a.mu.Unlock()
	a.logf("session %s created in %s (%d MCP servers)", id, p.Cwd, len(p.MCPServers))
	return map[string]any{"sessionId": id}, nil
}

// loadSession replays a session's conversation as session/update
// notifications, then answers. The demo keeps nothing on disk, so a
// session it has not seen in this process gets a short canned history
// (that keeps session/load usable in replays against a fresh agent).
func (a *agent) loadSession(params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decodeParams("session/load", params, &p); err != nil {
		return nil, err
	}
	if err := p.check("session/load"); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, rpcErrorf(CodeInvalidParams, "session/load: sessionId is required")
	}
	a.mu.Lock()
	s, ok := a.sessions[p.SessionID]
	if !ok {
		s = newSession(p.SessionID, p.Cwd)
		s.seedHistory()
		a.sessions[p.SessionID] = s
	}
	a.mu.Unlock()
	history := s.historyCopy()
	a.logf("session %s: replaying %d updates", p.SessionID, len(history))
	for _, u := range history {
		if err := a.c.notify("session/update", map[string]any{"sessionId": p.SessionID, "update": u}); err != nil {
			return nil, err
		}
	}
	return struct{}{}, nil
}

func (a *agent) session(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

func (a *agent) mintSessionID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.minted++
	if a.scheme() == SchemeUUID {
		return newUUID()
	}
	return "sess_" + strconv.Itoa(a.minted)
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (a *agent) clientCaps() clientCaps {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.caps
}
