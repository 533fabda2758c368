package proxy

import (
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
)

func TestAgreedDeflate(t *testing.T) {
	for _, tt := range []struct {
		ext  []string
		want bool
	}{
		{nil, false},
		{[]string{"permessage-deflate"}, true},
		{[]string{"permessage-deflate; server_no_context_takeover; client_max_window_bits=10"}, true},
		{[]string{"x-webkit-deflate-frame, permessage-deflate"}, true},
		{[]string{"x-webkit-deflate-frame"}, false},
		{[]string{"permessage-deflated"}, false},
	} {
		h := map[string][]string{"Sec-Websocket-Extensions": tt.ext}
		if got := agreedDeflate(h); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.ext, got, tt.want)
		}
	}
}

// TestDeflateRecorderBounds: what waits to be recorded on a compressed
// socket is bounded in bytes and in count, and what is not kept is
// recorded empty and truncated, in its place; a compressed message after
// one not kept is recorded as sent (it may refer back to it), with one
// warning.
func TestDeflateRecorderBounds(t *testing.T) {
	rec := &netkit.Recorder{}
	warnings := make(chan string, 8)
	relay := &byteRelay{rec: rec, limit: 1 << 20, msgEnv: &wire.Envelope{}, warn: func(s string) { warnings <- s }}
	d := &deflateRecorder{r: relay, jobs: make(chan recordJob, 3), maxHeld: 1000, done: make(chan struct{})}
	var z deflater
	noise := make([]byte, 3000)
	rand.Read(noise)
	first, second, third := `{"jsonrpc":"2.0","method":"a"}`, base64.StdEncoding.EncodeToString(noise), `{"jsonrpc":"2.0","method":"a"}`
	submit := func(msg string, compressed bool) {
		data := []byte(msg)
		if compressed {
			data = z.compress(msg)
		}
		d.submit(recordJob{dir: wire.DirAgent, data: data, compressed: compressed})
	}
	submit(first, true)   // kept
	submit(second, true)  // over the byte bound: not kept
	submit(third, true)   // kept, but may refer back to the one not kept
	submit("later", true) // the queue is full: missed, marked after the others
	go d.run()
	d.close()
	want := []struct {
		body  string
		flags wire.Flags
	}{{first, 0}, {"", wire.FlagTruncated}, {"", wire.FlagBinary}, {"", wire.FlagTruncated}}
	got := rec.All()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		if (w.body != "" && got[i].Body != w.body) || (w.body == "" && w.flags == wire.FlagTruncated && got[i].Body != "") || got[i].Flags != w.flags {
			t.Errorf("record %d: %q flags %v, want %q flags %v", i, got[i].Body[:min(len(got[i].Body), 40)], got[i].Flags, w.body, w.flags)
		}
	}
	close(warnings)
	var said []string
	for w := range warnings {
		said = append(said, w)
	}
	if len(said) != 2 || !strings.Contains(said[0], "fell behind the wire") || !strings.Contains(said[1], "could not be decoded") {
		t.Errorf("warned %q, want once that it fell behind, then once that a message could not be decoded", said)
	}
}

// TestDeflateRecorderKeepsCloses: a close that finds the socket's record
// queue full is kept, not dropped, and recorded in order with the closes
// after it once the queue has room, or at the end.
func TestDeflateRecorderKeepsCloses(t *testing.T) {
	for _, drained := range []bool{false, true} {
		rec := &netkit.Recorder{}
		relay := &byteRelay{rec: rec, limit: 1 << 20, msgEnv: &wire.Envelope{}, warn: func(string) {}}
		d := &deflateRecorder{r: relay, jobs: make(chan recordJob, 1), maxHeld: 1000, done: make(chan struct{})}
		closeJob := func(code string) recordJob {
			return recordJob{dir: wire.DirAgent, env: &wire.Envelope{Headers: map[string]string{"ws-close": code}}}
		}
		d.submit(recordJob{dir: wire.DirAgent, data: []byte(`{"jsonrpc":"2.0","method":"a"}`)}) // fills the queue
		d.submit(closeJob("1002 first"))
		d.submit(closeJob("1006 second"))
		if drained { // the queue empties before the next submit
			d.record(<-d.jobs)
			d.submit(recordJob{dir: wire.DirAgent, data: []byte(`{"jsonrpc":"2.0","method":"b"}`)})
		}
		go d.run()
		d.close()
		var got []string
		for _, f := range rec.All() {
			got = append(got, f.Env.Headers["ws-close"]+f.Body)
		}
		want := []string{`{"jsonrpc":"2.0","method":"a"}`, "1002 first", "1006 second"}
		if drained { // the closes go first, the message then finds the queue full
			want = append(want, "")
		}
		if !slices.Equal(got, want) {
			t.Errorf("drained %v: recorded %q, want %q", drained, got, want)
		}
	}
}

// TestDeflateRecorderKeepsOrder: records that find the queue full keep
// the order they were submitted in, a missed message's mark before a
// close after it, whether the recorder drains as they come or only at
// the end.
func TestDeflateRecorderKeepsOrder(t *testing.T) {
	closeJob := func(s string) recordJob {
		return recordJob{dir: wire.DirAgent, env: &wire.Envelope{Headers: map[string]string{"ws-close": s}}}
	}
	t.Run("a missed message, then a close", func(t *testing.T) {
		rec := &netkit.Recorder{}
		relay := &byteRelay{rec: rec, limit: 1 << 20, msgEnv: &wire.Envelope{}, warn: func(string) {}}
		d := &deflateRecorder{r: relay, jobs: make(chan recordJob, 1), maxHeld: 1 << 20, done: make(chan struct{})}
		d.submit(recordJob{dir: wire.DirClient, data: []byte("A")}) // fills the queue
		d.submit(recordJob{dir: wire.DirClient, data: []byte("B")}) // missed
		d.submit(closeJob("1000 bye"))
		go d.run()
		d.close()
		var got []string
		for _, f := range rec.All() {
			got = append(got, f.Env.Headers["ws-close"]+f.Body)
		}
		if want := []string{"A", "", "1000 bye"}; !slices.Equal(got, want) {
			t.Errorf("recorded %q, want %q", got, want)
		}
	})
	t.Run("while the recorder drains", func(t *testing.T) {
		for round := range 200 {
			rec := &slowRecorder{}
			relay := &byteRelay{rec: rec, limit: 1 << 20, msgEnv: &wire.Envelope{}, warn: func(string) {}}
			d := &deflateRecorder{r: relay, jobs: make(chan recordJob, 2), maxHeld: 1 << 20, done: make(chan struct{})}
			go d.run()
			const n = 300
			for i := range n {
				if s := strconv.Itoa(1000 + i); i%7 == 3 {
					d.submit(closeJob(s))
				} else {
					d.submit(recordJob{dir: wire.DirClient, data: []byte(s)})
				}
			}
			d.close()
			all := rec.All()
			if len(all) > n {
				t.Fatalf("round %d: %d records of %d submitted", round, len(all), n)
			}
			last, closes := 0, 0
			for _, f := range all {
				s := f.Env.Headers["ws-close"] + f.Body
				if f.Env.Headers["ws-close"] != "" {
					closes++
				}
				if s == "" {
					continue // a missed message's mark
				}
				k, _ := strconv.Atoi(s)
				if k < last {
					t.Fatalf("round %d: %d recorded after %d", round, k, last)
				}
				last = k
			}
			if want := (n + 3) / 7; closes != want {
				t.Fatalf("round %d: %d closes recorded, want %d", round, closes, want)
			}
		}
	})
}

// slowRecorder records as netkit.Recorder does, taking about as long
// over each record as a submit takes, so that a queue of a few records
// fills and drains while they are submitted.
type slowRecorder struct{ netkit.Recorder }

func (s *slowRecorder) Frame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	spin()
	s.Recorder.Frame(conn, dir, t, b, flags, env)
}

func (s *slowRecorder) TakeFrame(conn uint32, dir wire.Dir, t int64, b []byte, flags wire.Flags, env *wire.Envelope) {
	spin()
	s.Recorder.TakeFrame(conn, dir, t, b, flags, env)
}

var spun int

// spin takes a few hundred nanoseconds.
func spin() {
	for i := range 300 {
		spun += i & 1
	}
}

// TestDeflateRecorderWaitsInLittle: while the queue stays full, messages
// from both directions in turn wait as one mark per direction between
// closes, so what waits does not grow with them, and each is recorded,
// empty, on its side of the close.
func TestDeflateRecorderWaitsInLittle(t *testing.T) {
	rec := &netkit.Recorder{}
	relay := &byteRelay{rec: rec, limit: 1 << 20, msgEnv: &wire.Envelope{}, warn: func(string) {}}
	d := &deflateRecorder{r: relay, jobs: make(chan recordJob, 1), maxHeld: 1 << 20, done: make(chan struct{})}
	d.submit(recordJob{dir: wire.DirClient, data: []byte("A")}) // fills the queue
	turns := func(n int) {
		for i := range n {
			d.submit(recordJob{dir: []wire.Dir{wire.DirClient, wire.DirAgent}[i%2], data: []byte("m")})
		}
	}
	turns(1000)
	d.submit(recordJob{dir: wire.DirAgent, env: &wire.Envelope{Headers: map[string]string{"ws-close": "1000 bye"}}})
	turns(1000)
	if n := len(d.waiting); n > 5 {
		t.Fatalf("%d records wait for 2001 submitted; want a mark per direction on each side of the close", n)
	}
	go d.run()
	d.close()
	all := rec.All()
	closeAt := slices.IndexFunc(all, func(f netkit.Frame) bool { return f.Env.Headers["ws-close"] != "" })
	if len(all) != 2002 || closeAt != 1001 || all[0].Body != "A" {
		t.Fatalf("recorded %d, the close at %d; want A, 1000 empty, the close, 1000 empty", len(all), closeAt)
	}
}
