package demo

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// workspace is the client's in-memory file system: the demo never reads
// or writes real files.
type workspace struct {
	files     map[string]string
	terminals map[string]string // terminalId → simulated output
	minted    int
}

func newWorkspace(cwd string) workspace {
	return workspace{
		files: map[string]string{
			path.Join(cwd, DemoFile):    agentCopy,
			path.Join(cwd, "README.md"): "# demo\n\nA tiny program the demo agent edits.\n",
		},
		terminals: map[string]string{},
	}
}

func (w workspace) snapshot() map[string]string {
	out := make(map[string]string, len(w.files))
	for k, v := range w.files {
		out[k] = v
	}
	return out
}

func (cl *client) permission(params json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		Options   []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	if err := decodeParams("session/request_permission", params, &p); err != nil {
		return nil, err
	}
	if err := cl.checkSession("session/request_permission", p.SessionID); err != nil {
		return nil, err
	}
	if len(p.Options) == 0 {
		return nil, rpcErrorf(CodeInvalidParams, "session/request_permission: no options offered")
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.cancelAt && cl.turn != nil {
		// ACP: after session/cancel the client answers every pending
		// permission request with the cancelled outcome.
		cl.cancelAt = false
		cl.turn.Cancelled, cl.turn.Permission = true, "cancelled"
		if err := cl.c.notify("session/cancel", map[string]any{"sessionId": p.SessionID}); err != nil {
			return nil, err
		}
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	}
	choice := ""
	for _, o := range p.Options { // allow_once, else any allow, else the first option
		if o.Kind == "allow_once" || (choice == "" && strings.HasPrefix(o.Kind, "allow")) {
			choice = o.OptionID
		}
		if o.Kind == "allow_once" {
			break
		}
	}
	if choice == "" {
		choice = p.Options[0].OptionID
	}
	if cl.turn != nil {
		cl.turn.Permission = choice
	}
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}}, nil
}

type fileParams struct {
	SessionID string  `json:"sessionId"`
	Path      string  `json:"path"`
	Content   *string `json:"content"`
	Line      *int    `json:"line"`
	Limit     *int    `json:"limit"`
}

func (cl *client) fileRequest(method string, params json.RawMessage) (fileParams, error) {
	var p fileParams
	if err := decodeParams(method, params, &p); err != nil {
		return p, err
	}
	if err := cl.checkSession(method, p.SessionID); err != nil {
		return p, err
	}
	if !path.IsAbs(p.Path) {
		return p, rpcErrorf(CodeInvalidParams, "%s: path %q must be absolute", method, p.Path)
	}
	return p, nil
}

func (cl *client) readFile(params json.RawMessage) (any, error) {
	p, err := cl.fileRequest("fs/read_text_file", params)
	if err != nil {
		return nil, err
	}
	cl.mu.Lock()
	text, ok := cl.ws.files[p.Path]
	cl.mu.Unlock()
	if !ok {
		return nil, rpcErrorf(CodeNotFound, "fs/read_text_file: %s: no such file", p.Path)
	}
	return map[string]any{"content": lines(text, p.Line, p.Limit)}, nil
}

// lines applies fs/read_text_file's optional 1-based line and limit.
func lines(text string, line, limit *int) string {
	if line == nil && limit == nil {
		return text
	}
	all := strings.SplitAfter(text, "\n")
	start := 0
	if line != nil && *line > 1 {
		start = min(*line-1, len(all))
	}
	end := len(all)
	if limit != nil && *limit >= 0 {
		end = min(start+*limit, end)
	}
	return strings.Join(all[start:end], "")
}

func (cl *client) writeFile(params json.RawMessage) (any, error) {
	p, err := cl.fileRequest("fs/write_text_file", params)
	if err != nil {
		return nil, err
	}
	if p.Content == nil {
		return nil, rpcErrorf(CodeInvalidParams, "fs/write_text_file: content is required")
	}
	cl.mu.Lock()
	cl.ws.files[p.Path] = *p.Content
	cl.mu.Unlock()
	return struct{}{}, nil
}

// terminal simulates the terminal/* methods: every command "runs" at
// once, prints a line and exits 0.
func (cl *client) terminal(method string, params json.RawMessage) (any, error) {
	var p struct {
		SessionID  string   `json:"sessionId"`
		TerminalID string   `json:"terminalId"`
		Command    string   `json:"command"`
		Args       []string `json:"args"`
	}
	if err := decodeParams(method, params, &p); err != nil {
		return nil, err
	}
	if err := cl.checkSession(method, p.SessionID); err != nil {
		return nil, err
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if method == "terminal/create" {
		if p.Command == "" {
			return nil, rpcErrorf(CodeInvalidParams, "terminal/create: command is required")
		}
		cl.ws.minted++
		id := "term_" + strconv.Itoa(cl.ws.minted)
		cl.ws.terminals[id] = simulatedOutput(p.Command, p.Args)
		return map[string]any{"terminalId": id}, nil
	}
	out, ok := cl.ws.terminals[p.TerminalID]
	if !ok {
		return nil, rpcErrorf(CodeInvalidParams, "%s: unknown terminal %q", method, p.TerminalID)
	}
	exit := map[string]any{"exitCode": 0, "signal": nil}
	switch method {
	case "terminal/output":
		return map[string]any{"output": out, "truncated": false, "exitStatus": exit}, nil
	case "terminal/wait_for_exit":
		return exit, nil
	case "terminal/release":
		delete(cl.ws.terminals, p.TerminalID)
	}
	return struct{}{}, nil
}

func simulatedOutput(command string, args []string) string {
	if command == "go" && len(args) > 0 && args[0] == "test" {
		return "ok  \tdemo\t0.012s\n"
	}
	return fmt.Sprintf("$ %s %s\n", command, strings.Join(args, " "))
}
