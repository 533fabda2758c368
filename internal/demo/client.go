package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sync"
	"time"
)

// ClientName is the name the demo client gives in initialize's clientInfo.
const ClientName = "acpscope-demo-client"

// DefaultCwd is the (fake) workspace the demo client opens sessions in.
const DefaultCwd = "/workspace/demo"

// SecretValue is the MCP server env value the client sends with
// ClientOptions.MCPSecret: redaction tests look for it.
const SecretValue = "demo-secret-123"

// DefaultPrompts are the prompts of each demo session. The second and
// later prompts carry a resource_link to the demo file too.
var DefaultPrompts = []string{
	"Change the greeting in main.go to say hello to ACP.",
	"Check main.go once more and run the tests.",
}

// ClientOptions tune the demo client. The zero value runs one session
// with DefaultPrompts in DefaultCwd, advertising fs and terminal.
type ClientOptions struct {
	Prompts   []string // prompt texts; nil means DefaultPrompts
	Sessions  int      // sessions to open one after another (default 1)
	Cwd       string   // absolute workspace path (default DefaultCwd)
	Cancel    bool     // cancel the second prompt (the last, if only one) at its permission request
	Load      bool     // after the prompts, session/load the first session if the agent offers it
	MCPSecret bool     // send one MCP server whose env holds SecretValue
	Minimal   bool     // advertise no fs and no terminal capabilities
	// TraceParent, when set, goes in every session/prompt's
	// params._meta.traceparent (with TraceState as tracestate), as an
	// editor that traces its own work propagates W3C trace context.
	TraceParent, TraceState string
	// Grace is how long to wait for the agent to close its output after
	// the client closes its own (default 5 s); then the reader is closed.
	Grace time.Duration
}

func (o ClientOptions) withDefaults() ClientOptions {
	if o.Prompts == nil {
		o.Prompts = DefaultPrompts
	}
	if o.Sessions <= 0 {
		o.Sessions = 1
	}
	if o.Cwd == "" {
		o.Cwd = DefaultCwd
	}
	if o.Grace <= 0 {
		o.Grace = 5 * time.Second
	}
	return o
}

// client is the demo client's state; handlers run on the reader
// goroutine, the conversation on RunClient's, so mu guards what both see.
type client struct {
	opts ClientOptions
	c    *conn

	mu       sync.Mutex
	sum      Summary
	sessions map[string]int // sessionId → index in sum.Sessions
	turn     *Turn          // the running prompt, nil between prompts
	loading  string         // session being loaded, "" otherwise
	cancelAt bool           // cancel the running turn at its permission request
	creating bool           // a session/new is in flight
	early    []earlyUpdate  // updates for a session not yet answered
	ws       workspace
}

// RunClient drives one demo conversation over r (the agent's messages)
// and w (the client's): initialize, then per session session/new and
// the prompts (answering the agent's fs, terminal and permission
// requests from an in-memory workspace), then an optional session/load.
// It then closes w if it is an io.Closer (end of input for the agent),
// waits up to Grace for the agent to close r, and returns what it saw.
// A protocol mistake by the agent ends the conversation with an error
// wrapping ErrProtocol; the summary holds what came before it.
func RunClient(ctx context.Context, r io.Reader, w io.Writer, opts ClientOptions) (Summary, error) {
	opts = opts.withDefaults()
	if !path.IsAbs(opts.Cwd) {
		return Summary{}, fmt.Errorf("cwd %q must be absolute: %w", opts.Cwd, ErrOption)
	}
	cl := &client{opts: opts, sessions: map[string]int{}, ws: newWorkspace(opts.Cwd)}
	cl.c = newConn(r, w, handlers{request: cl.request, notify: cl.notification})
	cl.c.start()
	err := cl.converse(ctx)
	cl.hangUp(ctx, r, w)
	if cerr := cl.c.Err(); cerr != nil && (err == nil || errors.Is(err, ErrClosed)) {
		err = cerr // the root cause of a call that failed with ErrClosed
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.sum.Files = cl.ws.snapshot()
	return cl.sum, err
}

// hangUp closes the client's output and waits for the agent to close
// its own; an agent that never does is cut off after Grace.
func (cl *client) hangUp(ctx context.Context, r io.Reader, w io.Writer) {
	if c, ok := w.(io.Closer); ok {
		_ = c.Close()
	}
	timer := time.NewTimer(cl.opts.Grace)
	defer timer.Stop()
	select {
	case <-cl.c.done:
		return
	case <-timer.C:
	case <-ctx.Done():
	}
	if c, ok := r.(io.Closer); ok {
		cl.c.hungUp.Store(true)
		_ = c.Close()
		<-cl.c.done
	}
}

func (cl *client) converse(ctx context.Context) error {
	if err := cl.initialize(ctx); err != nil {
		return err
	}
	first := ""
	for i := 0; i < cl.opts.Sessions; i++ {
		id, err := cl.newSession(ctx)
		if err != nil {
			return err
		}
		if first == "" {
			first = id
		}
		for j, text := range cl.opts.Prompts {
			if err := cl.prompt(ctx, id, j, text); err != nil {
				return err
			}
		}
	}
	if cl.opts.Load && cl.sum.LoadSession {
		return cl.load(ctx, first)
	}
	return nil
}

func (cl *client) initialize(ctx context.Context) error {
	caps := map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true}
	if cl.opts.Minimal {
		caps = map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false}
	}
	var res struct {
		ProtocolVersion   *int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
		AgentInfo struct{ Name, Version string } `json:"agentInfo"`
	}
	err := cl.c.call(ctx, "initialize", map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": caps,
		"clientInfo":         map[string]any{"name": ClientName, "title": "acpscope demo client", "version": Version},
	}, &res)
	if err != nil {
		return err
	}
	if res.ProtocolVersion == nil || *res.ProtocolVersion != 1 {
		return protocolErrorf("initialize: agent answered protocolVersion %v; the demo client speaks 1", res.ProtocolVersion)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.sum.ProtocolVersion = *res.ProtocolVersion
	cl.sum.AgentName, cl.sum.AgentVersion = res.AgentInfo.Name, res.AgentInfo.Version
	cl.sum.LoadSession = res.AgentCapabilities.LoadSession
	return nil
}

func (cl *client) mcpServers() []any {
	if !cl.opts.MCPSecret {
		return []any{}
	}
	return []any{map[string]any{
		"name": "demo-tools", "command": "/usr/local/bin/demo-mcp-server", "args": []string{"--stdio"},
		"env": []any{map[string]any{"name": "API_KEY", "value": SecretValue}},
	}}
}

func (cl *client) newSession(ctx context.Context) (string, error) {
	var res struct {
		SessionID string `json:"sessionId"`
	}
	cl.mu.Lock()
	cl.creating = true
	cl.mu.Unlock()
	err := cl.c.call(ctx, "session/new", map[string]any{"cwd": cl.opts.Cwd, "mcpServers": cl.mcpServers()}, &res)
	if err != nil {
		return "", err
	}
	if res.SessionID == "" {
		return "", protocolErrorf("session/new result has no sessionId")
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if _, dup := cl.sessions[res.SessionID]; dup {
		return "", protocolErrorf("session/new returned sessionId %q a second time", res.SessionID)
	}
	cl.sessions[res.SessionID] = len(cl.sum.Sessions)
	cl.sum.Sessions = append(cl.sum.Sessions, SessionSummary{ID: res.SessionID})
	return res.SessionID, cl.adoptEarly(res.SessionID)
}

// promptBlocks builds a prompt: its text, plus a resource_link to the
// demo file from the second prompt on.
func (cl *client) promptBlocks(j int, text string) []any {
	blocks := []any{textBlock(text)}
	if j > 0 {
		blocks = append(blocks, map[string]any{"type": "resource_link", "uri": "file://" + path.Join(cl.opts.Cwd, DemoFile),
			"name": DemoFile, "mimeType": "text/x-go"})
	}
	return blocks
}

func (cl *client) prompt(ctx context.Context, id string, j int, text string) error {
	cancelAt := cl.opts.Cancel && j == min(1, len(cl.opts.Prompts)-1)
	cl.mu.Lock()
	cl.turn = &Turn{Prompt: text}
	cl.cancelAt = cancelAt
	cl.mu.Unlock()
	var res struct {
		StopReason string `json:"stopReason"`
	}
	params := map[string]any{"sessionId": id, "prompt": cl.promptBlocks(j, text)}
	if tp := cl.opts.TraceParent; tp != "" {
		meta := map[string]any{"traceparent": tp}
		if cl.opts.TraceState != "" {
			meta["tracestate"] = cl.opts.TraceState
		}
		params["_meta"] = meta
	}
	err := cl.c.call(ctx, "session/prompt", params, &res)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	t := cl.turn
	cl.turn, cl.cancelAt = nil, false
	if err != nil {
		return err
	}
	switch res.StopReason {
	case "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled":
	default:
		return protocolErrorf("session/prompt stopReason %q is not a known stop reason", res.StopReason)
	}
	t.StopReason = res.StopReason
	s := &cl.sum.Sessions[cl.sessions[id]]
	s.Turns = append(s.Turns, *t)
	return nil
}

func (cl *client) load(ctx context.Context, id string) error {
	cl.mu.Lock()
	cl.loading = id
	cl.mu.Unlock()
	defer func() {
		cl.mu.Lock()
		cl.loading = ""
		cl.mu.Unlock()
	}()
	return cl.c.call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": cl.opts.Cwd, "mcpServers": cl.mcpServers()}, nil)
}

// request answers the agent's requests on the reader goroutine, so the
// transcript keeps wire order.
func (cl *client) request(id json.RawMessage, method string, params json.RawMessage) {
	cl.mu.Lock()
	if cl.turn != nil {
		cl.turn.AgentRequests = append(cl.turn.AgentRequests, method)
	}
	cl.mu.Unlock()
	res, err := cl.handle(method, params)
	_ = cl.c.reply(id, res, err) // a failed write ends the reader too
}

func (cl *client) handle(method string, params json.RawMessage) (any, error) {
	switch method {
	case "session/request_permission":
		return cl.permission(params)
	case "fs/read_text_file":
		return cl.readFile(params)
	case "fs/write_text_file":
		return cl.writeFile(params)
	case "terminal/create", "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release":
		return cl.terminal(method, params)
	}
	return nil, rpcErrorf(CodeMethodNotFound, "method not found: %s", method)
}

// checkSession rejects requests naming a session this client never opened.
func (cl *client) checkSession(method, id string) error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if _, ok := cl.sessions[id]; !ok {
		return rpcErrorf(CodeInvalidParams, "%s: unknown session %q", method, id)
	}
	return nil
}
