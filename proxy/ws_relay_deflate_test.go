package proxy

import (
	"crypto/rand"
	"encoding/base64"
	"slices"
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
