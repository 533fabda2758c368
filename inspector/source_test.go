package inspector

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// memSource is a capture held in memory: a plain slice of records with
// their bodies, classified and paired the way the store does it. It
// serves tests until they can use real capture files.
type memSource struct {
	mu       sync.RWMutex
	meta     capture.Meta
	recs     []capture.Record
	findings []protocol.Finding
	pairer   *wire.Pairer[uint64] // the request's seq
	closed   bool

	updates chan struct{} // live only: signals arrivals, closed at the end
}

// newMemSource is a finished capture: closed cleanly an hour after it
// started.
func newMemSource(agent string) *memSource {
	start := time.Unix(1_780_000_000, 0)
	return &memSource{
		meta:   capture.Meta{Agent: agent, Transport: "stdio", Start: start, End: start.Add(time.Hour)},
		pairer: wire.NewPairer[uint64](),
	}
}

// add records one wire line (or a stderr line) at time t.
func (m *memSource) add(dir wire.Dir, t time.Time, line string, stderr bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := capture.Record{Msg: protocol.Msg{Seq: uint64(len(m.recs) + 1), Time: t.UnixNano(), Dir: dir, Body: []byte(line)}, Size: int64(len(line))}
	if stderr {
		r.Kind = wire.KindStderr
		m.recs = append(m.recs, r)
		return
	}
	c := wire.Classify([]byte(line))
	r.Kind, r.Flags, r.ID, r.Method, r.Session, r.ErrorCode = c.Kind, c.Flags, c.ID, c.Method, c.SessionID, c.ErrorCode
	switch c.Kind {
	case wire.KindRequest:
		m.pairer.Request(dir, c.ID, r.Seq)
	case wire.KindResponse, wire.KindError:
		if seq, ok := m.pairer.Response(dir, c.ID); ok {
			req := &m.recs[seq-1]
			r.Peer, r.Method, r.Latency = seq, req.Method, time.Duration(r.Time-req.Time)
			r.Session = protocol.ResponseSession(req.Method, req.Session, c.Result)
			req.Peer = r.Seq
		}
	}
	m.recs = append(m.recs, r)
}

func (m *memSource) Meta() capture.Meta {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.meta
}

func (m *memSource) Last() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return uint64(len(m.recs))
}

func (m *memSource) Record(seq uint64) (capture.Record, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return capture.Record{}, capture.ErrClosed
	}
	if seq == 0 || seq > uint64(len(m.recs)) {
		return capture.Record{}, capture.ErrNoRecord
	}
	r := m.recs[seq-1]
	r.Body = nil
	return r, nil
}

func (m *memSource) Body(seq uint64) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, capture.ErrClosed
	}
	if seq == 0 || seq > uint64(len(m.recs)) {
		return nil, capture.ErrNoRecord
	}
	return append([]byte(nil), m.recs[seq-1].Body...), nil
}

func (m *memSource) Scan(from uint64, fn func(*capture.Record) bool) error {
	m.mu.RLock()
	recs := m.recs
	m.mu.RUnlock()
	for i := int(from) - 1; i < len(recs); i++ {
		if i < 0 {
			continue
		}
		r := recs[i]
		r.Body = nil
		if !fn(&r) {
			break
		}
	}
	return nil
}

func (m *memSource) Findings() ([]protocol.Finding, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.findings, nil
}

func (m *memSource) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// liveMem is a memSource that is still being written.
type liveMem struct{ *memSource }

func newLiveMem(agent string) *liveMem {
	m := newMemSource(agent)
	m.meta.End = time.Time{}
	m.updates = make(chan struct{}, 1)
	return &liveMem{m}
}

func (l *liveMem) Updates() <-chan struct{} { return l.updates }
func (l *liveMem) Err() error               { return nil }

// arrive adds a line and signals it, as a live feed does.
func (l *liveMem) arrive(dir wire.Dir, line string) {
	l.add(dir, time.Now(), line, false)
	select {
	case l.updates <- struct{}{}:
	default:
	}
}

func (l *liveMem) finish() {
	l.mu.Lock()
	l.meta.End = time.Now()
	l.meta.Exit = &capture.Exit{Code: 0}
	l.mu.Unlock()
	close(l.updates)
}

// demoSource is a small conversation with every kind of row.
func demoSource() *memSource {
	m := newMemSource("demo-agent")
	t := m.meta.Start
	step := func() time.Time { t = t.Add(25 * time.Millisecond); return t }
	c, a := wire.DirClient, wire.DirAgent
	m.add(c, step(), `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, false)
	m.add(a, step(), `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"demo","version":"1"}}}`, false)
	m.add(c, step(), `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`, false)
	m.add(a, step(), `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_0123456789"}}`, false)
	m.add(c, step(), `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_0123456789","prompt":[{"type":"text","text":"Read the README"}]}}`, false)
	m.add(a, step(), `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_0123456789","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Reading "}}}}`, false)
	m.add(a, step(), `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_0123456789","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"it now."}}}}`, false)
	m.add(a, step(), "agent log: opening README.md", true)
	m.add(a, step(), `{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"sess_0123456789","path":"/tmp/README.md"}}`, false)
	m.add(c, step(), `{"jsonrpc":"2.0","id":0,"error":{"code":-32002,"message":"Resource not found"}}`, false)
	m.add(a, step(), `this is not json`, false)
	m.add(a, step(), `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_0123456789","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","mimeType":"image/png","data":"`+strings.Repeat("QUJD", 600)+`"}}}}`, false)
	t = t.Add(2 * time.Second)
	m.add(a, step(), `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`, false)
	m.findings = []protocol.Finding{{Rule: "jsonrpc/not-json", Severity: protocol.Error, Message: "a line on stdout is not JSON-RPC", Seqs: []uint64{11}}}
	return m
}

// fixtureSource reads an acp-devtools JSON export from the shared
// fixtures, skipping the test when the folder is absent.
func fixtureSource(t *testing.T, name string) *memSource {
	t.Helper()
	path := "../../shared/fixtures/acp-devtools-handshakes/" + name
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("fixture %s is absent (the shared fixtures are not part of a clone)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	var export struct {
		Messages []struct {
			Timestamp int64  `json:"timestamp"`
			Direction string `json:"direction"`
			Raw       string `json:"raw"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &export); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	m := newMemSource(strings.TrimSuffix(name, ".json"))
	for _, msg := range export.Messages {
		dir := wire.DirClient
		if msg.Direction == "agent-to-editor" {
			dir = wire.DirAgent
		}
		m.add(dir, time.UnixMilli(msg.Timestamp), msg.Raw, false)
	}
	if len(m.recs) == 0 {
		t.Fatalf("%s holds no messages", path)
	}
	m.meta.Start = time.Unix(0, m.recs[0].Time)
	return m
}

// bigSource has n small records, for paging tests.
func bigSource(n int) *memSource {
	m := newMemSource("big")
	t := m.meta.Start
	for i := 1; i <= n; i++ {
		t = t.Add(time.Millisecond)
		m.add(wire.DirClient, t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"note/%d","params":{"i":%d}}`, i%7, i), false)
	}
	return m
}
