package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// FuzzParseDevtools feeds the acp-devtools import parser: whatever it
// accepts, it turns each message into exactly one stdio line in seq
// order, keeping a raw line byte for byte when it is one line.
func FuzzParseDevtools(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(devtoolsDir, "*.json"))
	for _, name := range files {
		// The mutator crawls on inputs of a megabyte; the small
		// exports hold every shape the big one does.
		if data, err := os.ReadFile(name); err == nil && len(data) <= 64<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"version":1,"session":{"startedAt":1},"messages":[` +
		`{"seq":2,"timestamp":5,"direction":"agent-to-editor","payload":{"jsonrpc":"2.0",` + "\n" + `"id":1,"result":{}}},` +
		`{"seq":1,"timestamp":3,"direction":"editor-to-agent","raw":"{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"initialize\"}"},` +
		`{"seq":3,"timestamp":4,"direction":"editor-to-agent","raw":"not json\nat all"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		meta := Meta{Notes: map[string]string{}}
		lines, err := parseDevtools(data, &meta)
		if err != nil {
			return
		}
		var ex devtoolsExport
		if err := json.Unmarshal(data, &ex); err != nil {
			t.Fatalf("parsed what does not unmarshal: %v", err)
		}
		if len(lines) != len(ex.Messages) {
			t.Fatalf("%d lines from %d messages", len(lines), len(ex.Messages))
		}
		sort.SliceStable(ex.Messages, func(i, j int) bool { return ex.Messages[i].Seq < ex.Messages[j].Seq })
		for i, l := range lines {
			m := ex.Messages[i]
			if bytes.IndexByte(l.body, '\n') >= 0 {
				t.Fatalf("message %d became a body with a newline, which would frame as several: %q", m.Seq, l.body)
			}
			if want := map[string]Stream{"editor-to-agent": StreamClient, "agent-to-editor": StreamAgent}[m.Direction]; l.stream != want {
				t.Fatalf("message %d (%s) on stream %v", m.Seq, m.Direction, l.stream)
			}
			if m.Raw != nil && !bytes.Contains([]byte(*m.Raw), []byte{'\n'}) && string(l.body) != *m.Raw {
				t.Fatalf("message %d: raw %q became %q", m.Seq, *m.Raw, l.body)
			}
			if l.t != m.Timestamp*int64(time.Millisecond) {
				t.Fatalf("message %d: time %d from timestamp %d", m.Seq, l.t, m.Timestamp)
			}
		}
	})
}

// FuzzDecodePostings feeds the index posting decoder: it must not panic,
// what it accepts must ascend strictly from the base, and encoding that
// again must decode to the same seqs.
func FuzzDecodePostings(f *testing.F) {
	for _, p := range realPostings(f) {
		f.Add(p.base, p.v)
	}
	f.Add(uint64(1), []byte{0, 1, 1, 0x80, 0x01})
	f.Add(uint64(1), []byte{0x80})
	f.Add(uint64(1)<<63, []byte{0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}) // past the largest seq
	f.Fuzz(func(t *testing.T, base uint64, v []byte) {
		seqs, ok := decodePostings(nil, base, v)
		if !ok {
			return
		}
		for i, s := range seqs {
			if s < base || i > 0 && s <= seqs[i-1] {
				t.Fatalf("postings from %d do not ascend strictly: %v", base, seqs)
			}
		}
		again, ok := decodePostings(nil, base, appendPostings(nil, base, seqs))
		if !ok || !slices.Equal(again, seqs) {
			t.Fatalf("round trip of %v gave %v, %v", seqs, again, ok)
		}
	})
}

func TestDecodePostings(t *testing.T) {
	tests := []struct {
		name string
		base uint64
		v    []byte
		want []uint64 // nil: malformed
	}{
		{"from the base", 8, []byte{0, 1, 3}, []uint64{8, 9, 12}},
		{"empty", 8, nil, []uint64{}},
		{"repeated seq", 8, []byte{'0', 0}, nil},
		{"past the largest seq", 1 << 63, []byte{0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, nil},
		{"cut varint", 8, []byte{0x80}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := decodePostings([]uint64{}, tt.base, tt.v)
			if ok != (tt.want != nil) || ok && !slices.Equal(got, tt.want) {
				t.Errorf("decodePostings = %v, %v; want %v", got, ok, tt.want)
			}
		})
	}
}

type posting struct {
	base uint64
	v    []byte
}

// realPostings writes a small capture and returns its method index's
// postings, as the committer stored them.
func realPostings(f *testing.F) []posting {
	path := filepath.Join(f.TempDir(), "postings"+Ext)
	w, err := Create(path, WriterOptions{NoFeed: true, NoSync: true, CommitRecords: 7})
	if err != nil {
		f.Fatal(err)
	}
	for i := 1; i <= 40; i++ {
		w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
		if i%3 == 0 {
			w.Chunk(0, StreamClient, int64(i), []byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"}}`+"\n"))
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	var out []posting
	db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(indexBucket(IndexMethod)).ForEach(func(k, v []byte) error {
			if len(k) > 8 {
				out = append(out, posting{bigEndian(k[len(k)-8:]), bytes.Clone(v)})
			}
			return nil
		})
	})
	if len(out) == 0 {
		f.Fatal("the capture holds no postings")
	}
	return out
}

func bigEndian(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

// FuzzLiveFeed plays arbitrary bytes as a proxy's live feed to a Live:
// it must end, and hold only records the feed sent, in order, with a
// clean end only when the feed said so.
func FuzzLiveFeed(f *testing.F) {
	f.Add(realFeed(f))
	f.Add([]byte(`{"meta":{"formatVersion":3,"pid":7},"last":2}` + "\n" + AppendJSONLString(1) + AppendJSONLString(3) + `{"end":true}` + "\n"))
	f.Add([]byte(`{"meta":{"formatVersion":1},"last":0}` + "\n" + `{"error":"subscriber too slow"}` + "\n"))
	f.Add([]byte(`{"meta":{"formatVersion":1},"last":0}` + "\n{nope\n"))
	// Far seqs: each slot between held records costs memory.
	f.Add([]byte(`{"meta":{"formatVersion":1},"last":0}` + "\n" + strings.Replace(AppendJSONLString(1), `"seq":1`, `"seq":20000000`, 1)))
	f.Add([]byte(`{"meta":{"formatVersion":1},"last":0}` + "\n" + AppendJSONLString(1) + strings.Replace(AppendJSONLString(1), `"seq":1`, `"seq":20000000`, 1)))
	f.Fuzz(func(t *testing.T, feed []byte) {
		client, server := net.Pipe()
		l := newLive("fuzz", client, 1)
		go func() { // the fake proxy; it ends when the pipe closes
			server.Write(feed)
			server.Close()
		}()
		go l.read()
		select {
		case <-l.Done():
		case <-time.After(60 * time.Second):
			l.Close()
			t.Fatal("the Live did not end with its feed")
		}
		for range l.Updates() { // closed with the feed
		}
		if l.Err() == nil && !bytes.Contains(feed, []byte(`"end"`)) {
			t.Fatal("a feed that never said it ended ended cleanly")
		}
		sent := map[uint64][][]byte{}
		for _, line := range bytes.Split(feed, []byte{'\n'}) {
			if rec, err := ParseJSONL(line); err == nil {
				sent[rec.Seq] = append(sent[rec.Seq], rec.Body)
			}
		}
		var last uint64
		l.Scan(1, func(r *Record) bool {
			if r.Seq <= last {
				t.Fatalf("record %d after %d", r.Seq, last)
			}
			last = r.Seq
			body, err := l.Body(r.Seq)
			if err != nil || !slices.ContainsFunc(sent[r.Seq], func(b []byte) bool { return bytes.Equal(b, body) }) {
				t.Fatalf("record %d holds %q (%v), which the feed did not send", r.Seq, body, err)
			}
			return true
		})
		if last != l.Last() {
			t.Fatalf("Last() = %d, records end at %d", l.Last(), last)
		}
		// Holes cost memory: a feed may open only so many per record.
		if held, lines := len(l.recs), bytes.Count(feed, []byte{'\n'}); held > lines*(maxLiveGap+1) {
			t.Fatalf("%d lines made the Live hold %d record slots", lines, held)
		}
	})
}

// realFeed returns what a running writer's feed sends a subscriber over a
// capture's life: metadata, records, a metadata change and the end.
func realFeed(f *testing.F) []byte {
	path := filepath.Join(f.TempDir(), "feed"+Ext)
	w, err := Create(path, WriterOptions{NoSync: true, CommitEvery: time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	w.Chunk(0, StreamClient, 1, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"))
	w.Chunk(0, StreamAgent, 2, []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`+"\n"))
	c, err := dialFeed(path, 60*time.Second, false)
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(`{"from":1}` + "\n"))
	w.Chunk(0, StreamAgent, 3, []byte(notif(3)+"\n"))
	w.UpdateMeta(func(m *Meta) { m.Agent = "fuzz-agent" })
	w.Chunk(0, StreamAgent, 4, []byte("not json\n"))
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	var feed bytes.Buffer
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadBytes('\n')
		feed.Write(line)
		if err != nil || bytes.Equal(line, []byte("{\"end\":true}\n")) {
			return feed.Bytes()
		}
	}
}

// FuzzFeedRequest sends arbitrary opening lines to a running writer's
// feed: a line that is not a request gets an error, a request gets the
// metadata and then every record from the one it asked for.
func FuzzFeedRequest(f *testing.F) {
	path := filepath.Join(f.TempDir(), "feed"+Ext)
	w, err := Create(path, WriterOptions{NoSync: true, CommitEvery: time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { w.Close() })
	const records = 5
	for i := 1; i <= records; i++ {
		w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
	}
	// The committer counts a commit before it tells the feed, so wait for
	// the feed too: on a busy machine the seeds ran in between and the
	// feed answered last 0.
	waitUntil(f, func() bool { return w.Stats().Committed >= records && w.feed.last.Load() >= records },
		func() string {
			return fmt.Sprintf("%d records committed and the feed at %d, want %d", w.Stats().Committed, w.feed.last.Load(), records)
		})
	for _, req := range []string{`{"from":1}`, `{"from":4}`, `{"from":0}`, `{"from":18446744073709551615}`, `{}`, `null`, `nope`, `{"from":-1}`, `{"from":1.5}`} {
		f.Add([]byte(req))
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		c, err := dialFeed(path, 60*time.Second, false)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		c.Write(append(req[:len(req):len(req)], '\n'))
		line, _, _ := bytes.Cut(append(req[:len(req):len(req)], '\n'), []byte{'\n'})
		var want feedRequest
		bad := len(line)+1 > 512 || json.Unmarshal(append(line, '\n'), &want) != nil
		br := bufio.NewReader(c)
		first, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no answer to %q: %v", req, err)
		}
		var ctl feedControl
		if err := json.Unmarshal(first, &ctl); err != nil {
			t.Fatalf("answer %q to %q is not JSON: %v", first, req, err)
		}
		if bad {
			if ctl.Error == "" {
				t.Fatalf("answer %q to the bad request %q", first, req)
			}
			return
		}
		if ctl.Meta == nil || ctl.Last == nil || *ctl.Last != records {
			t.Fatalf("answer %q to the request %q", first, req)
		}
		for seq := max(want.From, 1); seq <= records; seq++ {
			b, err := br.ReadBytes('\n')
			if err != nil {
				t.Fatalf("record %d of the request %q: %v", seq, req, err)
			}
			rec, err := ParseJSONL(b)
			if err != nil || rec.Seq != seq || string(rec.Body) != notif(int(seq)) {
				t.Fatalf("record %d of the request %q: %q, %v", seq, req, b, err)
			}
		}
	})
}
