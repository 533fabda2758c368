package capture

// JSONL import, streamed: a line is read, parsed and handed to the
// Writer before the next is read, so memory holds a line or two, however
// long the file. A line longer than the read buffer is measured first and
// then read into memory of exactly its size.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// importJSON tells the acp-devtools export (one JSON document with
// "session" and "messages", often over many lines) and the traces of
// other tools (import_trace.go) from JSONL (one object per line) by the
// file's first line. Only JSONL is streamed; the others are read whole.
func importJSON(src, dst string) (ImportResult, error) {
	f, err := os.Open(src)
	if err != nil {
		return ImportResult{}, fmt.Errorf("reading %q: %w", src, err)
	}
	defer f.Close()
	lr := newLineReader(f)
	first, ferr := lr.nonEmpty()
	if ferr != nil && !errors.Is(ferr, io.EOF) {
		return ImportResult{}, fmt.Errorf("reading %q: %w", src, ferr)
	}
	if bytes.HasPrefix(first.text, []byte(`{"seq":`)) { // acpscope dump: told at once, however long
		return importJSONL(src, dst, lr, first, ferr)
	}
	trace := traceFormat(first.text)
	if trace != "" || !json.Valid(first.text) || wire.Value(first.text, "messages") != nil {
		data, err := os.ReadFile(src)
		if err != nil {
			return ImportResult{}, fmt.Errorf("reading %q: %w", src, err)
		}
		switch {
		case trace == FormatConductorTrace:
			return importConductorTrace(src, dst, data)
		case trace == FormatInspectorTrace:
			return importInspectorTrace(src, dst, data)
		case isDevtools(data):
			return importDevtools(src, dst, data)
		}
	}
	return importJSONL(src, dst, lr, first, ferr)
}

// isDevtools reports whether data is one JSON document with "messages".
func isDevtools(data []byte) bool {
	var probe struct {
		Messages json.RawMessage `json:"messages"`
	}
	return json.Unmarshal(data, &probe) == nil && probe.Messages != nil
}

// minimalLine is the simplest JSONL form: {"dir":"client","msg":{…}},
// with an optional time (RFC 3339 or unix ms).
type minimalLine struct {
	Dir  string          `json:"dir"`
	Msg  json.RawMessage `json:"msg"`
	Time json.RawMessage `json:"time"`
}

// importJSONL writes the lines of lr, from first on, into a new capture
// at dst, created once the first line has given the session's start.
// err is what reading first returned.
func importJSONL(src, dst string, lr *lineReader, first rawLine, err error) (ImportResult, error) {
	res := ImportResult{Format: FormatJSONL}
	var cp *copier
	base := time.Now().UnixNano()
	var last int64
	for rl := first; ; rl, err = lr.nonEmpty() {
		if len(rl.text) > 0 {
			l, skip, perr := parseImportLine(rl.text, base+int64(rl.n))
			if perr != nil {
				if cp == nil {
					return res, fmt.Errorf("%q line %d: %v: %w", src, rl.n, perr, ErrUnknownFormat)
				}
				cp.w.Close()
				return res, fmt.Errorf("%q line %d: %w", src, rl.n, perr)
			}
			if !skip {
				if cp == nil {
					if cp, err = startImport(src, dst, l.t); err != nil {
						return res, err
					}
				}
				if !rl.owned {
					l.body = bytes.Clone(l.body) // the read buffer is reused
				}
				last = max(last, l.t)
				cp.putLine(&l)
				res.Records++
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if cp != nil {
				cp.w.Close()
			}
			return res, fmt.Errorf("reading %q: %w", src, err)
		}
	}
	if cp == nil {
		return res, fmt.Errorf("%q holds no lines: %w", src, ErrUnknownFormat)
	}
	cp.w.setEnd(time.Unix(0, last).UTC())
	return res, cp.finish()
}

// startImport creates the capture a JSONL import writes, starting at t.
func startImport(src, dst string, t int64) (*copier, error) {
	meta := importMeta(src, FormatJSONL)
	meta.Start = time.Unix(0, t).UTC()
	w, err := Create(dst, copyOptions(meta))
	if err != nil {
		return nil, err // Create names the file
	}
	return newCopier(w), nil
}

// parseImportLine reads one JSONL line: our dump format first (through
// parseDumpLine), then the minimal form. fallback is the time to use when
// the line has none; skip marks lines that add nothing (batch members).
func parseImportLine(raw []byte, fallback int64) (l line, skip bool, err error) {
	if l, skip, ok := parseDumpLine(raw); ok {
		return l, skip, nil
	}
	l, err = parseMinimalLine(raw, fallback)
	return l, false, err
}

func parseMinimalLine(raw []byte, fallback int64) (line, error) {
	var m minimalLine
	if err := json.Unmarshal(raw, &m); err != nil {
		return line{}, fmt.Errorf("not JSON: %v", err)
	}
	l := line{t: fallback}
	switch m.Dir {
	case "client", "editor-to-agent", "c2a":
		l.stream = StreamClient
	case "agent", "agent-to-editor", "a2c":
		l.stream = StreamAgent
	case "stderr":
		l.stream = StreamStderr
	default:
		return line{}, fmt.Errorf(`"dir" is %q, want "client" or "agent"`, m.Dir)
	}
	if len(m.Msg) == 0 {
		return line{}, errors.New(`no "msg"`)
	}
	l.body = []byte(m.Msg)
	if m.Msg[0] == '"' { // a stderr line, or a message that was not one JSON line
		var s string
		_ = json.Unmarshal(m.Msg, &s)
		l.body = []byte(s)
	}
	if t, ok := parseLineTime(m.Time); ok {
		l.t = t
	}
	return l, nil
}

// parseLineTime accepts unix milliseconds or an RFC 3339 string.
func parseLineTime(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var ms int64
	if json.Unmarshal(raw, &ms) == nil {
		return ms * int64(time.Millisecond), true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UnixNano(), true
		}
	}
	return 0, false
}
