package capture

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// Traces other ACP tools write, one JSON object per line:
//
//   - the reference conductor's --trace file (agentclientprotocol/rust-sdk,
//     agent-client-protocol-conductor, md/trace-viewer.md): events
//     {"type":"request"|"response"|"notification", "ts": seconds since the
//     trace began, "protocol":"acp"|"mcp", "from", "to", "id", "method",
//     "session"?, "params"} and for responses {"is_error", "payload"}, with
//     components named Client, Proxy(N) and Agent. The conductor logs the
//     logical flow: successor wrappers already unwrapped, MCP messages
//     taken out of mcp/message. Each pair of components that spoke becomes
//     a connection of the capture, and the JSON-RPC lines are rebuilt from
//     the events (an MCP message back inside an mcp/message, whose
//     connectionId the trace does not keep).
//   - acp-inspector's trace export (sagikazarmark/acp-inspector,
//     docs/trace-export.md, "acp-inspector-trace" version 1): a header
//     line, then {"type":"frame","at": unix ms, "connection", "direction":
//     "client -> agent"|"agent -> client", "encoding":"utf8"|"base64",
//     "frame": the exact bytes}. Frames are kept byte for byte.

// The formats of other tools' traces.
const (
	FormatConductorTrace = "acp-conductor-trace"
	FormatInspectorTrace = "acp-inspector-trace"
)

// traceFormat tells which trace the first line of a file starts, "" when
// it is none of them.
func traceFormat(first []byte) string {
	var probe struct {
		Type   string          `json:"type"`
		Format string          `json:"format"`
		From   json.RawMessage `json:"from"`
		To     json.RawMessage `json:"to"`
	}
	if json.Unmarshal(first, &probe) != nil {
		return ""
	}
	switch {
	case probe.Type == "header" && probe.Format == FormatInspectorTrace:
		return FormatInspectorTrace
	case (probe.Type == "request" || probe.Type == "response" || probe.Type == "notification") && probe.From != nil && probe.To != nil:
		return FormatConductorTrace
	}
	return ""
}

// firstLine returns the first non-blank line of data.
func firstLine(data []byte) []byte {
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		if l := bytes.TrimSpace(line); len(l) > 0 {
			return l
		}
		data = rest
	}
	return nil
}

// traceLines calls fn with each non-blank line of data and its number.
func traceLines(data []byte, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			if err := fn(n, l); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// conductorEvent is one event of the conductor's trace.
type conductorEvent struct {
	Type     string          `json:"type"`
	TS       *float64        `json:"ts"`
	Protocol string          `json:"protocol"`
	From     string          `json:"from"`
	To       string          `json:"to"`
	ID       json.RawMessage `json:"id"`
	Method   string          `json:"method"`
	Params   json.RawMessage `json:"params"`
	IsError  bool            `json:"is_error"`
	Payload  json.RawMessage `json:"payload"`
}

func importConductorTrace(src, dst string, data []byte) (ImportResult, error) {
	res := ImportResult{Format: FormatConductorTrace}
	meta := importMeta(src, FormatConductorTrace)
	start := time.Now()
	if fi, err := os.Stat(src); err == nil {
		start = fi.ModTime()
	}
	lines, links, last, err := parseConductorTrace(data)
	if err != nil {
		return res, fmt.Errorf("reading the conductor trace %q: %w", src, err)
	}
	// The trace holds offsets from its start only; the file was last
	// written at its last event.
	base := start.Add(-time.Duration(last * float64(time.Second))).UnixNano()
	for i := range lines {
		lines[i].t += base
	}
	meta.Start, meta.End = time.Unix(0, base).UTC(), start.UTC()
	meta.Agent = "conductor"
	meta.Notes["connections"] = strings.Join(links, "; ")
	meta.Notes["bodies"] = "rebuilt from the trace's events, which keep no wire bytes"
	n, err := writeLines(dst, meta, lines)
	res.Records = n
	return res, err
}

// parseConductorTrace turns the events into lines with times relative to
// the trace's start, and names each connection.
func parseConductorTrace(data []byte) (lines []line, links []string, last float64, err error) {
	conns := map[[2]int]uint32{}
	pos := componentPositions{}
	err = traceLines(data, func(n int, raw []byte) error {
		var e conductorEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if e.From == "" || e.To == "" || e.TS == nil {
			return fmt.Errorf("line %d: an event needs from, to and ts", n)
		}
		body, err := e.body()
		if err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		from, to := pos.of(e.From), pos.of(e.To)
		key := [2]int{min(from, to), max(from, to)}
		conn, ok := conns[key]
		if !ok {
			conn = uint32(len(conns))
			conns[key] = conn
			lo, hi := e.From, e.To
			if from > to {
				lo, hi = hi, lo
			}
			links = append(links, fmt.Sprintf("conn %d: %s ↔ %s", conn, lo, hi))
		}
		l := line{t: int64(*e.TS * float64(time.Second)), conn: conn, body: body, stream: StreamClient}
		if from > to { // sent back toward the client
			l.stream = StreamAgent
		}
		last = max(last, *e.TS)
		lines = append(lines, l)
		return nil
	})
	if err == nil && len(lines) == 0 {
		err = fmt.Errorf("no events: %w", ErrUnknownFormat)
	}
	return lines, links, last, err
}

// componentPositions orders the conductor's components from the client
// to the agent: Client, Proxy(0), Proxy(1), …, Agent. A name it does not
// know goes after the proxies, in order of first appearance.
type componentPositions map[string]int

const agentPosition = 1 << 20

func (p componentPositions) of(name string) int {
	switch {
	case name == "Client":
		return 0
	case name == "Agent":
		return agentPosition
	case strings.HasPrefix(name, "Proxy(") && strings.HasSuffix(name, ")"):
		if i, err := strconv.Atoi(name[len("Proxy(") : len(name)-1]); err == nil && i >= 0 && i < agentPosition-1 {
			return i + 1
		}
	}
	if n, ok := p[name]; ok {
		return n
	}
	p[name] = agentPosition + 1 + len(p)
	return p[name]
}

// body rebuilds the JSON-RPC line an event logged.
func (e *conductorEvent) body() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0"`)
	writeMember := func(name string, v []byte) {
		b.WriteString(`,"` + name + `":`)
		b.Write(v)
	}
	switch e.Type {
	case "request", "notification":
		if e.Method == "" {
			return nil, fmt.Errorf("a %s without a method", e.Type)
		}
		if e.Type == "request" {
			writeMember("id", orNull(e.ID))
		}
		method, params := e.Method, bytes.TrimSpace(e.Params)
		if e.Protocol == "mcp" {
			// The conductor took the MCP message out of its mcp/message.
			inner := []byte(`{"method":` + string(wire.Quote(method)))
			if len(params) > 0 && string(params) != "null" {
				inner = append(append(inner, `,"params":`...), params...)
			}
			method, params = "mcp/message", append(inner, '}')
		}
		writeMember("method", wire.Quote(method))
		if len(params) > 0 && string(params) != "null" {
			writeMember("params", params)
		}
	case "response":
		writeMember("id", orNull(e.ID))
		member := "result"
		if e.IsError {
			member = "error"
		}
		writeMember(member, orNull(bytes.TrimSpace(e.Payload)))
	default:
		return nil, fmt.Errorf("event type %q (want request, response or notification)", e.Type)
	}
	b.WriteByte('}')
	return compactJSON(b.Bytes()), nil
}

func orNull(v []byte) []byte {
	if len(v) == 0 {
		return []byte("null")
	}
	return v
}

// inspectorTrace is one line of acp-inspector's trace export.
type inspectorTrace struct {
	Type       string          `json:"type"`
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	At         *int64          `json:"at"`
	Frames     *int            `json:"frames"`
	Dropped    int             `json:"dropped"`
	Connection json.RawMessage `json:"connection"`
	Direction  string          `json:"direction"`
	Encoding   string          `json:"encoding"`
	Frame      *string         `json:"frame"`
}

func importInspectorTrace(src, dst string, data []byte) (ImportResult, error) {
	res := ImportResult{Format: FormatInspectorTrace}
	meta := importMeta(src, FormatInspectorTrace)
	lines, err := parseInspectorTrace(data, &meta)
	if err != nil {
		return res, fmt.Errorf("reading the acp-inspector trace %q: %w", src, err)
	}
	n, err := writeLines(dst, meta, lines)
	res.Records = n
	return res, err
}

// parseInspectorTrace reads the header and the frames, each kept as the
// exact bytes it carries, and fills meta from the header.
func parseInspectorTrace(data []byte, meta *Meta) ([]line, error) {
	var lines []line
	conns := map[string]uint32{}
	header := false
	want := -1
	err := traceLines(data, func(n int, raw []byte) error {
		var rec inspectorTrace
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		switch rec.Type {
		case "header":
			if header {
				return fmt.Errorf("line %d: a second header", n)
			}
			header = true
			if rec.Version != 1 {
				return fmt.Errorf("line %d: %s version %d; this acpscope reads version 1", n, FormatInspectorTrace, rec.Version)
			}
			if rec.Frames != nil {
				want = *rec.Frames
			}
			if rec.At != nil {
				meta.Notes["exportedAt"] = time.UnixMilli(*rec.At).UTC().Format(time.RFC3339)
			}
			if rec.Dropped > 0 {
				// Not our loss (Meta.Loss counts what acpscope failed to
				// record): the export says its trace is not the whole session.
				meta.Notes["dropped"] = fmt.Sprintf("acp-inspector had dropped %d frames (cleared, or past its ring) before the export", rec.Dropped)
			}
			return nil
		case "frame":
		default:
			return nil // later versions may add record types; readers skip them
		}
		if !header {
			return fmt.Errorf("line %d: a frame before the header", n)
		}
		l, err := rec.line(conns)
		if err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no frames: %w", ErrUnknownFormat)
	}
	if want >= 0 && want != len(lines) {
		meta.Notes["frames"] = fmt.Sprintf("the header announces %d frames, the file holds %d", want, len(lines))
	}
	meta.Start, meta.End = time.Unix(0, lines[0].t).UTC(), lastTime(lines)
	return lines, nil
}

// line turns a frame record into a frame of the capture, its bytes as
// they crossed (a frame may hold a newline, so it is not re-framed).
func (rec *inspectorTrace) line(conns map[string]uint32) (line, error) {
	l := line{frame: true}
	switch rec.Direction {
	case "client -> agent":
		l.dir, l.stream = wire.DirClient, StreamClient
	case "agent -> client":
		l.dir, l.stream = wire.DirAgent, StreamAgent
	default:
		return l, fmt.Errorf(`direction %q (want "client -> agent" or "agent -> client")`, rec.Direction)
	}
	if rec.Frame == nil || rec.At == nil {
		return l, fmt.Errorf("a frame needs at and frame")
	}
	switch rec.Encoding {
	case "utf8", "":
		l.body = []byte(*rec.Frame)
	case "base64":
		b, err := base64.StdEncoding.DecodeString(*rec.Frame)
		if err != nil {
			return l, fmt.Errorf("frame: %v", err)
		}
		l.body = b
	default:
		return l, fmt.Errorf("encoding %q (want utf8 or base64)", rec.Encoding)
	}
	// Connections are ordinals (the inspector) or strings (its bridge).
	key := string(bytes.TrimSpace(rec.Connection))
	c, ok := conns[key]
	if !ok {
		c = uint32(len(conns))
		conns[key] = c
	}
	l.conn, l.t = c, *rec.At*int64(time.Millisecond)
	return l, nil
}
