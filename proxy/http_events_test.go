package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
)

// eventStream is what an upstream sends in TestEventRelay: its bytes cut
// into the pieces it writes (each flushed), the event data a capture must
// hold, and its trailers.
type eventStream struct {
	pieces     [][]byte
	events     []string
	announced  map[string]string // declared in the Trailer header
	undeclared map[string]string
	cut        bool // the upstream drops the connection after the pieces
}

// eventsOf builds n events of sizes up to max bytes of data, seeded.
func eventsOf(seed int64, n, max int) (stream []byte, events []string) {
	rng := rand.New(rand.NewSource(seed))
	for i := range n {
		data := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"i":%d,"pad":"%s"}}`, i, strings.Repeat("x", rng.Intn(max)))
		events = append(events, data)
		stream = wire.AppendSSEEvent(stream, fmt.Sprint(i), []byte(data))
	}
	return stream, events
}

// cutRandomly cuts b into pieces of 1 byte to 40 KiB.
func cutRandomly(seed int64, b []byte) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	var pieces [][]byte
	for len(b) > 0 {
		n := min(len(b), 1+rng.Intn(40<<10))
		pieces, b = append(pieces, b[:n]), b[n:]
	}
	return pieces
}

func (s eventStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	for k := range s.announced {
		h.Add("Trailer", k)
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, p := range s.pieces {
		w.Write(p)
		rc.Flush()
	}
	if s.cut {
		panic(http.ErrAbortHandler) // no end of the chunked body: the stream is cut
	}
	for k, v := range s.announced {
		h.Set(k, v)
	}
	for k, v := range s.undeclared {
		h.Set(http.TrailerPrefix+k, v)
	}
}

// TestEventRelay: an event stream the proxy relays itself reaches the
// client byte for byte, however the upstream cuts it, with its trailers
// and its end (or its abrupt end); and a real capture holds every event's
// data exactly, in order, though each whole event was lent from a buffer
// the relay reuses once the capture gives it back.
func TestEventRelay(t *testing.T) {
	whole, wholeEvents := eventsOf(1, 600, 20<<10)
	var flushedOneByOne [][]byte
	for i := 0; i < len(whole); {
		end := i + bytes.Index(whole[i:], []byte("\n\n")) + 2
		flushedOneByOne, i = append(flushedOneByOne, whole[i:end]), end
	}
	small, smallEvents := eventsOf(2, 3000, 300)
	tests := []struct {
		name   string
		stream eventStream
	}{
		{"events flushed one by one", eventStream{pieces: flushedOneByOne, events: wholeEvents}},
		{"events cut anywhere", eventStream{pieces: cutRandomly(3, whole), events: wholeEvents}},
		{"small events in big writes", eventStream{pieces: cutRandomly(4, small), events: smallEvents}},
		{"trailers", eventStream{pieces: flushedOneByOne[:3], events: wholeEvents[:3],
			announced: map[string]string{"X-Done": "yes"}, undeclared: map[string]string{"X-Late": "1"}}},
		{"cut in the middle of an event", eventStream{pieces: [][]byte{flushedOneByOne[0], flushedOneByOne[1][:100]},
			events: []string{wholeEvents[0], strings.TrimPrefix(string(flushedOneByOne[1][:100]), "id: 1\ndata: ")}, cut: true}},
	}
	for _, proto := range []netkit.Proto{netkit.H1, netkit.H2C} {
		for _, tt := range tests {
			t.Run(string(proto)+"/"+tt.name, func(t *testing.T) {
				checkEventRelay(t, proto, tt.stream)
			})
		}
	}
}

func checkEventRelay(t *testing.T, proto netkit.Proto, s eventStream) {
	p, w, path, front := capturingProxy(t, proto, s)
	c := netkit.ClientFor(t, proto, front)
	req, _ := http.NewRequest(http.MethodGet, front.URL+"/acp", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	sent := bytes.Join(s.pieces, nil)
	if !bytes.Equal(got, sent) {
		t.Fatalf("the client got %d bytes, the upstream sent %d; first difference at %d", len(got), len(sent), testkit.FirstDiff(got, sent))
	}
	if s.cut != (rerr != nil) {
		t.Fatalf("reading the stream: %v; the upstream cut it: %v", rerr, s.cut)
	}
	for k, v := range s.announced {
		if resp.Trailer.Get(k) != v {
			t.Errorf("trailer %s: %q, want %q (trailers %v)", k, resp.Trailer.Get(k), v, resp.Trailer)
		}
	}
	for k, v := range s.undeclared {
		if resp.Trailer.Get(k) != v {
			t.Errorf("undeclared trailer %s: %q, want %q (trailers %v)", k, resp.Trailer.Get(k), v, resp.Trailer)
		}
	}
	p.Close()
	front.Close() // every handler has returned, so every event is handed over
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Loss.Messages != 0 {
		t.Fatalf("capture lost %d messages: %+v", st.Loss.Messages, st)
	}
	if n := p.held.readChunks.Load(); n != 0 {
		t.Fatalf("%d read buffers still held once the capture is closed", n)
	}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recorded []string
	var flags []wire.Flags
	r.Scan(1, func(rec *capture.Record) bool {
		if rec.HTTP == nil || rec.HTTP.Stream == wire.StreamHTTPControl {
			return true // the stream's opening
		}
		body, err := r.Body(rec.Seq)
		if err != nil {
			t.Fatal(err)
		}
		recorded = append(recorded, string(body))
		flags = append(flags, rec.Flags)
		return true
	})
	if len(recorded) != len(s.events) {
		t.Fatalf("recorded %d events, want %d", len(recorded), len(s.events))
	}
	for i := range s.events {
		if recorded[i] != s.events[i] {
			t.Fatalf("event %d recorded as %.60q… (%d bytes), want %.60q… (%d bytes)", i, recorded[i], len(recorded[i]), s.events[i], len(s.events[i]))
		}
	}
	if last := flags[len(flags)-1]; s.cut != (last&wire.FlagPartial != 0) {
		t.Errorf("the last event's flags %v; the stream was cut in it: %v", last, s.cut)
	}
}

// TestEventRelayWhileBodyStreams: an upstream may answer a POST with an
// event stream before it has read the whole body, as HTTP/2 allows; the
// rest of the body must still reach it while the proxy relays the
// stream, and the stream must go on.
func TestEventRelayWhileBodyStreams(t *testing.T) {
	up := netkit.StartServer(t, netkit.H2C, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := make([]byte, 10)
		io.ReadFull(r.Body, head)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(wire.AppendSSEEvent(nil, "", []byte(fmt.Sprintf(`{"head":%q}`, head))))
		http.NewResponseController(w).Flush()
		rest, err := io.ReadAll(r.Body)
		w.Write(wire.AppendSSEEvent(nil, "", []byte(fmt.Sprintf(`{"rest":%q,"err":%q}`, rest, fmt.Sprint(err)))))
	}))
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: up.URL + "/acp"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	front := netkit.StartServer(t, netkit.H2C, p)
	c := netkit.ClientFor(t, netkit.H2C, front)
	body, send := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/acp", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	go send.Write([]byte(`{"jsonrpc"`))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	if first, err := events.ReadString('\n'); err != nil || !strings.Contains(first, `"head"`) {
		t.Fatalf("first event: %q, %v", first, err)
	}
	send.Write([]byte(`:"2.0","method":"x"}`)) // only now: the proxy is relaying the stream
	send.Close()
	rest, err := io.ReadAll(events)
	if want := `{"rest":":\"2.0\",\"method\":\"x\"}","err":"<nil>"}`; err != nil || !strings.Contains(string(rest), want) {
		t.Fatalf("rest of the stream: %q, %v; want the upstream to have read the rest of the body: %s", rest, err, want)
	}
}

// capturingProxy starts up, and acpscope's proxy in front of it
// recording into a real capture in t's temporary directory (no fsync, no
// live feed), both over proto. It returns the proxy, the capture's
// writer (closed when t ends) and path, and the proxy's server.
func capturingProxy(t *testing.T, proto netkit.Proto, up http.Handler) (*HTTPProxy, *capture.Writer, string, *httptest.Server) {
	path := filepath.Join(t.TempDir(), "test.acpscope")
	w, err := capture.Create(path, capture.WriterOptions{NoFeed: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	upSrv := netkit.StartServer(t, proto, up)
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL + "/acp", Recorder: w})
	if err != nil {
		t.Fatal(err)
	}
	return p, w, path, netkit.StartServer(t, proto, p)
}

// TestEventStreamsAbandoned: clients that open an event stream, read its
// first event and vanish, over HTTP/1.1 and h2c, with a real capture,
// leave nothing behind: no request in flight, no read buffer held, no
// upstream stream open, no goroutine.
func TestEventStreamsAbandoned(t *testing.T) {
	var open atomic.Int64 // upstream streams not yet ended
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open.Add(1)
		defer open.Add(-1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(wire.AppendSSEEvent(nil, "1", []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"`+strings.Repeat("x", 9<<10)+`"}}`)))
		http.NewResponseController(w).Flush()
		<-r.Context().Done() // held open until the proxy lets go
	})
	for _, proto := range []netkit.Proto{netkit.H1, netkit.H2C} {
		t.Run(string(proto), func(t *testing.T) {
			goroutines := runtime.NumGoroutine()
			upSrv := netkit.StartServer(t, proto, up)
			w, err := capture.Create(filepath.Join(t.TempDir(), "abandoned.acpscope"), capture.WriterOptions{NoFeed: true, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL + "/acp", Recorder: w})
			if err != nil {
				t.Fatal(err)
			}
			front := netkit.StartServer(t, proto, p)
			for range 50 {
				c := netkit.ClientFor(t, proto, front) // a connection of its own, dropped with the client
				req, _ := http.NewRequest(http.MethodGet, front.URL+"/acp", nil)
				req.Header.Set("Accept", "text/event-stream")
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.HasPrefix(line, "id: 1") {
					t.Fatalf("first line of the stream: %q, %v", line, err)
				}
				resp.Body.Close() // gone mid-stream
				c.CloseIdleConnections()
			}
			netkit.WaitLong(t, "every stream's handler gone", func() bool { return p.InFlight() == 0 })
			netkit.WaitLong(t, "every upstream stream ended", func() bool { return open.Load() == 0 })
			netkit.WaitLong(t, "every read buffer given back", func() bool { return p.held.readChunks.Load() == 0 })
			p.Close()
			front.Close()
			upSrv.Close()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			netkit.WaitLong(t, "every goroutine gone", func() bool { return runtime.NumGoroutine() <= goroutines })
		})
	}
}
