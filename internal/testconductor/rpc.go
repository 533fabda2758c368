package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// message is one JSON-RPC message; raw members keep their bytes.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func (m *message) isRequest() bool      { return m.Method != "" && m.ID != nil }
func (m *message) isNotification() bool { return m.Method != "" && m.ID == nil }

// successor spellings: what the reference conductor reads and writes.
var successorMethods = map[string]bool{
	"_proxy/successor/request": true, "_proxy/successor/notification": true, "_proxy/successor": true,
}

// wrapped is the params of a successor wrapper: the inner message,
// flattened (RFD §Message reference).
type wrapped struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// wrap returns m carried in a successor wrapper: the outer id is m's id,
// whether it is a request is told by it.
func wrap(m message, single bool) message {
	inner, _ := json.Marshal(wrapped{Method: m.Method, Params: m.Params})
	method := "_proxy/successor/notification"
	switch {
	case single:
		method = "_proxy/successor"
	case m.ID != nil:
		method = "_proxy/successor/request"
	}
	return message{JSONRPC: "2.0", ID: m.ID, Method: method, Params: inner}
}

// unwrap returns the message a successor wrapper carries.
func unwrap(m message) (message, bool) {
	if !successorMethods[m.Method] {
		return m, false
	}
	var w wrapped
	if json.Unmarshal(m.Params, &w) != nil || w.Method == "" {
		return m, false
	}
	return message{JSONRPC: "2.0", ID: m.ID, Method: w.Method, Params: w.Params}, true
}

// lineWriter writes one message per line; safe for concurrent use.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) send(m message) error {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.w.Write(append(b, '\n'))
	return err
}

// readMessages calls fn with each JSON-RPC message read from r until its
// end; lines that are not JSON are skipped.
func readMessages(r io.Reader, fn func(message)) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		var m message
		if len(bytes.TrimSpace(line)) > 0 && json.Unmarshal(line, &m) == nil {
			fn(m)
		}
		if err != nil {
			return
		}
	}
}

// withACP returns an initialize result that advertises MCP-over-ACP
// (mcpCapabilities.acp), the rest untouched in meaning.
func withACP(result json.RawMessage) json.RawMessage {
	var res map[string]any
	if json.Unmarshal(result, &res) != nil || res == nil {
		return result
	}
	caps, _ := res["agentCapabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
	}
	mcp, _ := caps["mcpCapabilities"].(map[string]any)
	if mcp == nil {
		mcp = map[string]any{}
	}
	mcp["acp"] = true
	caps["mcpCapabilities"] = mcp
	res["agentCapabilities"] = caps
	b, err := json.Marshal(res)
	if err != nil {
		return result
	}
	return b
}
