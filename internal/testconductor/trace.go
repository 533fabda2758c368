package main

import (
	"bufio"
	"encoding/json"
	"os"
	"sync"
	"time"
)

// tracer writes the conductor's trace as the reference conductor's
// --trace does (md/trace-viewer.md): one JSON event per line, the logical
// flow between components (wrappers unwrapped, MCP taken out of its
// mcp/message and marked "mcp"), ts in seconds since the trace began. A
// nil tracer writes nothing. It is safe for concurrent use.
type tracer struct {
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	start time.Time
}

func newTracer(path string) (*tracer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return &tracer{f: f, w: bufio.NewWriter(f), start: time.Now()}, nil
}

func (t *tracer) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w.Flush()
	t.f.Close()
}

// message logs a request or notification from → to.
func (t *tracer) message(from, to string, m message) {
	if t == nil {
		return
	}
	protocol, method, params := "acp", m.Method, m.Params
	if m.Method == "mcp/message" {
		var mcp struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(m.Params, &mcp) == nil && mcp.Method != "" {
			protocol, method, params = "mcp", mcp.Method, mcp.Params
		}
	}
	if params == nil {
		params = json.RawMessage("null")
	}
	ev := map[string]any{"type": "notification", "protocol": protocol, "from": from, "to": to, "method": method, "params": params}
	if m.ID != nil {
		ev["type"], ev["id"] = "request", m.ID
	}
	t.write(ev)
}

// response logs an answer from the responder to the requester, under the
// id the responder saw.
func (t *tracer) response(from, to string, m message) {
	if t == nil {
		return
	}
	ev := map[string]any{"type": "response", "from": from, "to": to, "id": m.ID, "is_error": m.Error != nil, "payload": m.Result}
	if m.Error != nil {
		ev["payload"] = m.Error
	}
	t.write(ev)
}

func (t *tracer) write(ev map[string]any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ev["ts"] = time.Since(t.start).Seconds()
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	t.w.Write(append(b, '\n'))
	t.w.Flush() // each event is flushed, as the reference conductor does
}
