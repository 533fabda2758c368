package inspector

import (
	"strings"
	"sync"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// gatedSource holds body reads until its gate opens, except those of
// the first request and response (the detail pane shows the selected one
// at once).
type gatedSource struct {
	*memSource
	gate chan struct{}
	once sync.Once
}

func (g *gatedSource) Body(seq uint64) ([]byte, error) {
	if seq > 2 {
		<-g.gate
	}
	return g.memSource.Body(seq)
}

func (g *gatedSource) open() { g.once.Do(func() { close(g.gate) }) }

// TestRowsDecoratedOffTheUIGoroutine: the table draws while the body
// reads of its rows are held up (the UI goroutine waits for none), then
// shows the session/update variants and line previews once they go
// through.
func TestRowsDecoratedOffTheUIGoroutine(t *testing.T) {
	src := &gatedSource{memSource: demoSource(), gate: make(chan struct{})}
	h := startUI(t, Options{source: src})
	t.Cleanup(src.open) // runs before the harness stops the UI
	h.waitFor("initialize", "session/update", "fs/read_text_file")
	if s := h.text(); strings.Contains(s, "update:agent_message") || strings.Contains(s, "agent log: opening") {
		t.Fatalf("rows were decorated although no body could be read:\n%s", s)
	}
	src.open()
	h.waitFor("update:agent_message", "agent log: opening")
}

func TestQuickDecoration(t *testing.T) {
	rec := func(kind wire.Kind, method string, size int64, env *wire.Envelope) capture.Record {
		return capture.Record{Msg: protocol.Msg{Seq: 7, Kind: kind, Method: method, HTTP: env}, Size: size}
	}
	tests := []struct {
		name       string
		rec        capture.Record
		preview    string
		wantUpdate bool
		wantBody   bool
	}{
		{"a request needs nothing", rec(wire.KindRequest, "session/prompt", 10, nil), "", false, false},
		{"an update reads its variant", rec(wire.KindNotification, "session/update", 10, nil), "", true, true},
		{"stderr reads its start", rec(wire.KindStderr, "", 10, nil), "", false, true},
		{"a huge line is only sized", rec(wire.KindNonProtocol, "", decorateMax+1, nil), "(1.0 MiB line)", false, false},
		{"a huge update is left plain", rec(wire.KindNotification, "session/update", decorateMax+1, nil), "", false, false},
		{"an HTTP exchange", rec(wire.KindNonProtocol, "", 0, &wire.Envelope{Method: "POST", Path: "/acp", Status: 202, Stream: wire.StreamHTTPControl}), "POST /acp 202 Accepted", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, w := quickDecoration(&tt.rec)
			if d.preview != tt.preview || (w != nil) != tt.wantBody || (w != nil && (w.update != tt.wantUpdate || w.seq != 7)) {
				t.Errorf("quickDecoration = %+v, %+v; want preview %q, body %v (update %v)", d, w, tt.preview, tt.wantBody, tt.wantUpdate)
			}
		})
	}
}

// TestDecoratorKeepsNewest: requests past the bound drop the oldest, and
// the worker takes the newest first.
func TestDecoratorKeepsNewest(t *testing.T) {
	d := newDecorator()
	var ws []decoWant
	for seq := uint64(1); seq <= maxWanted+10; seq++ {
		ws = append(ws, decoWant{seq: seq})
	}
	d.want(ws)
	batch := d.next()
	if len(batch) != blockRows || batch[len(batch)-1].seq != maxWanted+10 {
		t.Fatalf("first batch holds %d requests ending at %d, want %d ending at %d", len(batch), batch[len(batch)-1].seq, blockRows, maxWanted+10)
	}
	total := len(batch)
	var last []decoWant
	for b := d.next(); len(b) > 0; b = d.next() {
		total += len(b)
		last = b
	}
	if total != maxWanted || last[0].seq != 11 {
		t.Fatalf("kept %d requests, oldest %d; want %d, oldest 11", total, last[0].seq, maxWanted)
	}
}
