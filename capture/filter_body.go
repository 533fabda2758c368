package capture

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// This file holds the terms that read a record's bytes: free text,
// update: and JSON paths. Each checks what the metadata can tell first, so
// the body is loaded only for records it might match.

func filterDuration(n int64) string { return time.Duration(n).String() }

// fTextNode searches the raw bytes: case-insensitively for a bare word,
// exactly for quoted text.
type fTextNode struct {
	text  string
	exact bool
	fold  *foldSearch // the bare word's search
}

func newWordNode(word string) *fTextNode {
	return &fTextNode{text: word, fold: newFoldSearch(word)}
}

func (n *fTextNode) match(c *filterEval) bool {
	if n.exact {
		return bytes.Contains(c.bytes(), []byte(n.text))
	}
	return n.fold.in(c.bytes())
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func (n *fTextNode) needsBody() bool { return true }
func (n *fTextNode) write(b *strings.Builder) {
	if n.exact {
		b.WriteString(quoteFilterString(n.text))
		return
	}
	b.WriteString(n.text)
}

// fUpdateNode matches session/update notifications by their variant
// (params.update.sessionUpdate).
type fUpdateNode struct{ pattern string }

func (n *fUpdateNode) match(c *filterEval) bool {
	if c.r.Method != "session/update" || c.r.Kind != wire.KindNotification {
		return false
	}
	m := c.r.Msg
	m.Body = c.bytes()
	v, _ := protocol.UpdateOf(&m)
	return v != "" && globMatch(n.pattern, v)
}

func (n *fUpdateNode) needsBody() bool { return true }
func (n *fUpdateNode) write(b *strings.Builder) {
	b.WriteString("update:" + quoteFilterValue(n.pattern))
}

// fPathNode matches a JSON path's value: a string by its decoded text
// (with * globs), anything else by its exact JSON text.
type fPathNode struct {
	path  []string
	value string
}

func (n *fPathNode) match(c *filterEval) bool {
	if !c.r.Kind.IsProtocol() || c.r.Kind == wire.KindBatch {
		return false
	}
	v := jsonPathValue(c.bytes(), n.path)
	if v == nil && c.r.Hop > 0 && len(n.path) > 1 && n.path[0] == "params" {
		// params.… of a proxy-chain wrapper: the inner message's params.
		m := c.r.Msg
		m.Body = c.bytes()
		v = jsonPathIn(protocol.Unwrap(&m).Params, n.path[1:])
	}
	if v == nil {
		return false
	}
	if v[0] == '"' {
		return globMatch(n.value, decodeJSONString(v))
	}
	return string(v) == n.value
}

func (n *fPathNode) needsBody() bool { return true }
func (n *fPathNode) write(b *strings.Builder) {
	b.WriteString(strings.Join(n.path, ".") + "=" + quoteFilterValue(n.value))
}

// jsonPathValue returns the exact bytes at path in the JSON document doc, or nil.
// Numeric segments index arrays. doc need not be valid: invalid input
// yields nil.
func jsonPathValue(doc []byte, path []string) []byte {
	v := bytes.TrimSpace(doc)
	if len(v) == 0 || v[0] != '{' || !json.Valid(v) {
		return nil
	}
	return jsonPathIn(v, path)
}

// jsonPathIn walks path from v, exact bytes of a valid JSON value.
func jsonPathIn(v []byte, path []string) []byte {
	for _, seg := range path {
		if len(v) == 0 {
			return nil
		}
		switch v[0] {
		case '{':
			v = wire.Value(v, seg)
		case '[':
			v = jsonArrayElement(v, seg)
		default:
			return nil
		}
		if v == nil {
			return nil
		}
	}
	return v
}

func jsonArrayElement(arr []byte, seg string) []byte {
	i, err := strconv.Atoi(seg)
	if err != nil || i < 0 {
		return nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(arr, &elems) != nil || i >= len(elems) {
		return nil
	}
	return bytes.TrimSpace(elems[i])
}

func decodeJSONString(lit []byte) string {
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return ""
	}
	return s
}

// fMCPNode matches what an MCP-over-ACP request or notification carries:
// mcp.method the MCP method of mcp/message (mcp/connect and mcp/disconnect
// match their own names), mcp.tool the tool of a tools/call. An answer
// matches what its request carried, where the request can be read.
type fMCPNode struct {
	field   string // "mcp.method" or "mcp.tool"
	pattern string
}

func (n *fMCPNode) match(c *filterEval) bool {
	if protocol.MCPMethod(c.r.Method) == "" {
		return false
	}
	m := c.r.Msg
	if c.r.Kind.IsResponse() {
		if c.r.Peer == 0 || c.bodyOf == nil {
			return false
		}
		m = protocol.FromLine(c.r.Peer, c.r.Dir.Reverse(), c.bodyOf(c.r.Peer))
	} else {
		m.Body = c.bytes()
	}
	mcp, ok := protocol.DecodeMCP(&m)
	if !ok {
		return false
	}
	v := mcp.Tool
	if n.field == "mcp.method" {
		v = mcp.Method
		if mcp.ACPMethod != "mcp/message" {
			v = mcp.ACPMethod
		}
	}
	return v != "" && globMatch(n.pattern, v)
}

func (n *fMCPNode) needsBody() bool { return true }
func (n *fMCPNode) write(b *strings.Builder) {
	b.WriteString(n.field + ":" + quoteFilterValue(n.pattern))
}
