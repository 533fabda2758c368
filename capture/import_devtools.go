package capture

// The acp-devtools JSON export: one document, read whole (its messages
// may come in any order and are sorted by their seq).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// devtoolsExport is the acp-devtools JSON export (version 1).
type devtoolsExport struct {
	Version int `json:"version"`
	Tool    struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"tool"`
	Session struct {
		ID           json.RawMessage `json:"id"`
		AgentCommand string          `json:"agentCommand"`
		ClientName   string          `json:"clientName"`
		StartedAt    int64           `json:"startedAt"` // unix ms
		EndedAt      int64           `json:"endedAt"`
	} `json:"session"`
	Messages []struct {
		Seq       int64           `json:"seq"`
		Timestamp int64           `json:"timestamp"` // unix ms
		Direction string          `json:"direction"` // editor-to-agent, agent-to-editor
		Raw       *string         `json:"raw"`       // the exact wire line
		Payload   json.RawMessage `json:"payload"`
	} `json:"messages"`
}

func importDevtools(src, dst string, data []byte) (ImportResult, error) {
	res := ImportResult{Format: FormatDevtools}
	meta := importMeta(src, FormatDevtools)
	lines, err := parseDevtools(data, &meta)
	if err != nil {
		return res, fmt.Errorf("reading the acp-devtools export %q: %w", src, err)
	}
	n, err := writeLines(dst, meta, lines)
	res.Records = n
	return res, err
}

// parseDevtools reads an acp-devtools export into its messages, in seq
// order, each one line of a stdio stream (its body holds no newline), and
// fills meta from its session.
func parseDevtools(data []byte, meta *Meta) ([]line, error) {
	var ex devtoolsExport
	if err := json.Unmarshal(data, &ex); err != nil {
		return nil, err
	}
	sort.SliceStable(ex.Messages, func(i, j int) bool { return ex.Messages[i].Seq < ex.Messages[j].Seq })
	meta.Start = time.UnixMilli(ex.Session.StartedAt).UTC()
	meta.Argv = strings.Fields(ex.Session.AgentCommand)
	if len(meta.Argv) > 0 {
		meta.Agent = filepath.Base(meta.Argv[0])
	}
	meta.Notes["clientName"] = ex.Session.ClientName
	meta.Notes["exportedBy"] = strings.TrimSpace(ex.Tool.Name + " " + ex.Tool.Version)
	if ex.Session.EndedAt != 0 {
		meta.End = time.UnixMilli(ex.Session.EndedAt).UTC()
	}
	lines := make([]line, 0, len(ex.Messages))
	for _, m := range ex.Messages {
		var l line
		switch m.Direction {
		case "editor-to-agent":
			l.stream = StreamClient
		case "agent-to-editor":
			l.stream = StreamAgent
		default:
			return nil, fmt.Errorf("message %d: direction %q (want editor-to-agent or agent-to-editor)", m.Seq, m.Direction)
		}
		l.t = m.Timestamp * int64(time.Millisecond)
		switch {
		case m.Raw != nil:
			l.body = []byte(*m.Raw)
		case m.Payload != nil:
			l.body = compactJSON(m.Payload) // no raw line: the parsed form is all there is
		default:
			return nil, fmt.Errorf("message %d has neither raw nor payload", m.Seq)
		}
		if bytes.ContainsAny(l.body, "\n") {
			l.body = compactJSON(l.body)
		}
		lines = append(lines, l)
	}
	if meta.End.IsZero() && len(lines) > 0 {
		meta.End = lastTime(lines)
	}
	return lines, nil
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return bytes.ReplaceAll(b, []byte("\n"), []byte(" "))
	}
	return buf.Bytes()
}

// writeLines writes lines into a new capture.
func writeLines(dst string, meta Meta, lines []line) (int, error) {
	w, err := Create(dst, copyOptions(meta))
	if err != nil {
		return 0, err // Create names the file
	}
	cp := newCopier(w)
	for i := range lines {
		cp.putLine(&lines[i])
		lines[i] = line{}
	}
	return len(lines), cp.finish()
}

// lastTime is when the last of lines was seen: the end of a session
// known only by its messages.
func lastTime(lines []line) time.Time {
	var t int64
	for _, l := range lines {
		t = max(t, l.t)
	}
	return time.Unix(0, t).UTC()
}
