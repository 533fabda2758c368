package capture

// Import turns a file from elsewhere into a capture: our own capture
// files (copied and validated), JSONL with one message per line and its
// direction, the acp-devtools JSON export, and the traces of the
// reference conductor and of acp-inspector (import_trace.go).

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// ErrUnknownFormat: Import could not tell what the file is.
var ErrUnknownFormat = errors.New(`unrecognised format: expected an acpscope capture, JSONL (acpscope dump lines, or {"dir":"client"|"agent","msg":{…}} per line), an acp-devtools JSON export, a conductor --trace file or an acp-inspector trace export`)

// The formats Import reads.
const (
	FormatCapture  = "acpscope capture"
	FormatJSONL    = "jsonl"
	FormatDevtools = "acp-devtools"
)

// ImportResult says what Import read.
type ImportResult struct {
	Format  string
	Records int
}

// Import reads src and writes a new capture at dst (which must not
// exist), with Meta.Transport "import" and the original times.
func Import(src, dst string) (ImportResult, error) {
	head, err := readHead(src, 4096)
	if err != nil {
		return ImportResult{}, err
	}
	// Checked first, and never removed below: a failed import must not
	// delete a file that was there before it.
	if _, err := os.Lstat(dst); err == nil {
		return ImportResult{}, fmt.Errorf("%s already exists: %w", dst, fs.ErrExist)
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	var res ImportResult
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		res, err = importJSON(src, dst)
	case isBolt(head):
		res, err = importCapture(src, dst)
	default:
		err = fmt.Errorf("%q: %w", src, ErrUnknownFormat)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		os.Remove(dst)
	}
	return res, err
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err // names the file and what failed
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %q: %w", path, err)
	}
	return buf[:k], nil
}

// isBolt reports whether head starts a bbolt database (the magic number
// at byte 16 of its first page): a capture, whole or damaged, rather than
// some other format.
func isBolt(head []byte) bool {
	return len(head) >= 20 && binary.LittleEndian.Uint32(head[16:]) == 0xED0CDAED
}

// NoteImportedAt is the Meta.Notes key holding when a capture was
// imported (RFC 3339): its start stays the session's own, so this is
// what tells gc an old session imported today is new here.
const NoteImportedAt = "importedAt"

// importMeta starts the metadata of an imported capture.
func importMeta(src string, format string) Meta {
	return Meta{
		Transport: "import",
		Notes: map[string]string{"importedFrom": filepath.Base(src), "format": format,
			NoteImportedAt: time.Now().UTC().Format(time.RFC3339)},
	}
}

// importCapture copies one of our capture files record by record, which
// also proves every record and body can be read.
func importCapture(src, dst string) (ImportResult, error) {
	res := ImportResult{Format: FormatCapture}
	r, err := Open(src)
	if err != nil {
		return res, err // it says whether the file is corrupt or not ours
	}
	defer r.Close()
	meta := r.Meta()
	orig := meta.Transport
	meta.Notes = copyNotes(meta.Notes)
	imported := importMeta(src, FormatCapture)
	for k, v := range imported.Notes {
		meta.Notes[k] = v
	}
	meta.Notes["originalTransport"] = orig
	meta.Transport = "import" // the start and end stay the session's own
	w, err := Create(dst, WriterOptions{Meta: meta, NoFeed: true, QueueBytes: 256 << 20})
	if err != nil {
		return res, err // Create names the file
	}
	cp := newCopier(w)
	var readErr error
	err = r.Scan(1, func(rec *Record) bool {
		if rec.Flags&wire.FlagBatchMember != 0 {
			return true
		}
		full := *rec
		if full.Body, readErr = r.Body(rec.Seq); readErr != nil {
			readErr = fmt.Errorf("record %d: %w", rec.Seq, readErr)
			return false
		}
		cp.put(&full)
		res.Records++
		return true
	})
	if err == nil {
		err = readErr
	}
	if err != nil {
		w.Close()
		return res, fmt.Errorf("reading %q: %w", src, err)
	}
	return res, cp.finish()
}

func copyNotes(n map[string]string) map[string]string {
	out := make(map[string]string, len(n)+3)
	for k, v := range n {
		out[k] = v
	}
	return out
}

// importJSON tells the acp-devtools export (one JSON document with
// "session" and "messages") from the traces of other tools (a first line
// that says which) and from JSONL (one object per line).
func importJSON(src, dst string) (ImportResult, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return ImportResult{}, fmt.Errorf("reading %q: %w", src, err)
	}
	switch traceFormat(firstLine(data)) {
	case FormatConductorTrace:
		return importConductorTrace(src, dst, data)
	case FormatInspectorTrace:
		return importInspectorTrace(src, dst, data)
	}
	var probe struct {
		Session  json.RawMessage `json:"session"`
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.Messages != nil {
		return importDevtools(src, dst, data)
	}
	return importJSONL(src, dst, data)
}

// line is one message to write, whatever format it came from.
type line struct {
	t      int64
	stream Stream
	body   []byte
	// HTTP and WebSocket messages (from our JSONL) keep their envelope.
	conn  uint32
	dir   wire.Dir
	flags wire.Flags
	env   *wire.Envelope
	// frame: the body is one whole message as it crossed, recorded as a
	// frame (it may hold a newline) rather than a line of a stream.
	frame bool
}

// writeLines writes lines as stdio stream chunks into a new capture.
func writeLines(dst string, meta Meta, lines []line) (int, error) {
	w, err := Create(dst, WriterOptions{Meta: meta, NoFeed: true, QueueBytes: 256 << 20})
	if err != nil {
		return 0, err // Create names the file
	}
	cp := newCopier(w)
	for _, l := range lines {
		switch {
		case (l.env != nil || l.frame) && l.stream != StreamStderr:
			w.Frame(l.conn, l.dir, l.t, l.body, l.flags, l.env)
		case l.flags&wire.FlagPartial != 0:
			w.Chunk(l.conn, l.stream, l.t, l.body)
			w.EndStream(l.conn, l.stream, l.t)
		default:
			w.Chunk(l.conn, l.stream, l.t, append(l.body[:len(l.body):len(l.body)], '\n'))
		}
		cp.throttle()
	}
	return len(lines), cp.finish()
}

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

// minimalLine is the simplest JSONL form: {"dir":"client","msg":{…}},
// with an optional time (RFC 3339 or unix ms).
type minimalLine struct {
	Dir  string          `json:"dir"`
	Msg  json.RawMessage `json:"msg"`
	Time json.RawMessage `json:"time"`
}

func importJSONL(src, dst string, data []byte) (ImportResult, error) {
	res := ImportResult{Format: FormatJSONL}
	meta := importMeta(src, FormatJSONL)
	var lines []line
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	base := time.Now().UnixNano()
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		l, skip, err := parseImportLine(raw, base+int64(n))
		if skip {
			continue
		}
		if err != nil {
			if len(lines) == 0 {
				return res, fmt.Errorf("%q line %d: %v: %w", src, n, err, ErrUnknownFormat)
			}
			return res, fmt.Errorf("%q line %d: %w", src, n, err)
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return res, fmt.Errorf("%q holds no lines: %w", src, ErrUnknownFormat)
	}
	meta.Start = time.Unix(0, lines[0].t).UTC()
	meta.End = lastTime(lines)
	n, err := writeLines(dst, meta, lines)
	res.Records = n
	return res, err
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
