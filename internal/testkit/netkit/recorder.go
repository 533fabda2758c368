package netkit

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Recorder keeps frames in memory, as a capture.Writer would store them,
// and the bytes of each stream (an agent's stderr), so tests can check
// what a transport recorded. The zero value is ready to use.
type Recorder struct {
	mu      sync.Mutex
	frames  []Frame
	streams map[streamKey][]byte
	ended   map[streamKey]bool
}

// Frame is one recorded message.
type Frame struct {
	Conn  uint32
	Dir   wire.Dir
	Body  string
	Flags wire.Flags
	Env   wire.Envelope
	Fault *protocol.Fault // set by Altered
}

type streamKey struct {
	conn uint32
	s    capture.Stream
}

// Frame keeps a copy of the message.
func (m *Recorder) Frame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := Frame{Conn: conn, Dir: dir, Body: string(b), Flags: flags}
	if env != nil {
		f.Env = *env
	}
	m.frames = append(m.frames, f)
}

// TakeFrame keeps the message as Frame does.
func (m *Recorder) TakeFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	m.Frame(conn, dir, t, b, flags, env)
}

// Altered keeps the message as Frame does, with its fault.
func (m *Recorder) Altered(conn uint32, dir wire.Dir, t int64, b []byte, env *wire.Envelope, f *protocol.Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fr := Frame{Conn: conn, Dir: dir, Body: string(b), Fault: f}
	if env != nil {
		fr.Env = *env
	}
	m.frames = append(m.frames, fr)
}

// Chunk adds b to what stream s of conn recorded.
func (m *Recorder) Chunk(conn uint32, s capture.Stream, t int64, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.streams == nil {
		m.streams = map[streamKey][]byte{}
	}
	k := streamKey{conn, s}
	m.streams[k] = append(m.streams[k], b...)
}

// EndStream notes that stream s of conn ended.
func (m *Recorder) EndStream(conn uint32, s capture.Stream, t int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended == nil {
		m.ended = map[streamKey]bool{}
	}
	m.ended[streamKey{conn, s}] = true
}

// Stream returns what stream s of conn recorded, and whether it ended.
func (m *Recorder) Stream(conn uint32, s capture.Stream) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := streamKey{conn, s}
	return string(m.streams[k]), m.ended[k]
}

// All returns the frames recorded so far, in order.
func (m *Recorder) All() []Frame {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Frame(nil), m.frames...)
}

// HasStatus reports whether a frame with the HTTP status was recorded.
func (m *Recorder) HasStatus(status int) bool {
	for _, f := range m.All() {
		if f.Env.Status == status {
			return true
		}
	}
	return false
}

// Lines returns "conn dir method stream status body" for every frame,
// in order.
func (m *Recorder) Lines() []string {
	var out []string
	for _, f := range m.All() {
		out = append(out, fmt.Sprintf("%d %s %s %s %d %s", f.Conn, f.Dir, f.Env.Method, f.Env.Stream, f.Env.Status, f.Body))
	}
	return out
}

// ContainsAll checks that rec holds frames starting with each of want
// (see Lines), waiting up to CondWait: a response is recorded as its
// handler returns, which may be just after the client has it.
func ContainsAll(t *testing.T, rec *Recorder, want ...string) {
	t.Helper()
	deadline := time.Now().Add(CondWait)
	for {
		joined := strings.Join(rec.Lines(), "\n")
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(joined, w)
		}
		if !missing || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	joined := strings.Join(rec.Lines(), "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("recorded frames lack %q; got:\n%s", w, joined)
		}
	}
}

// CheckRecordedProto checks that every frame's envelope names the HTTP
// version a client speaking proto used.
func CheckRecordedProto(t *testing.T, rec *Recorder, proto Proto) {
	t.Helper()
	want := "HTTP/2.0"
	if proto == H1 {
		want = "HTTP/1.1"
	}
	for _, f := range rec.All() {
		if f.Env.Proto != want {
			t.Fatalf("frame %s %s %d recorded with HTTP version %q, want %s", f.Env.Method, f.Env.Stream, f.Env.Status, f.Env.Proto, want)
		}
	}
}
