package capture

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// feedStep is one call on the tap.
type feedStep struct {
	stream Stream
	data   string
	end    bool
	frame  *wire.Envelope // Frame with this envelope instead of Chunk
}

// want describes one expected record.
type want struct {
	dir    wire.Dir
	kind   wire.Kind
	flags  wire.Flags
	body   string
	method string
	parent uint64
	peer   uint64
}

func chunked(s Stream, line string, size int) []feedStep {
	var out []feedStep
	for len(line) > 0 {
		n := min(size, len(line))
		out = append(out, feedStep{stream: s, data: line[:n]})
		line = line[n:]
	}
	return out
}

func bigLine(n int) string {
	prefix := `{"jsonrpc":"2.0","method":"big","params":{"x":"`
	suffix := `"}}`
	return prefix + strings.Repeat("a", n-len(prefix)-len(suffix)) + suffix
}

func TestRoundTrip(t *testing.T) {
	req := `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1"}}`
	resp := `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`
	batch := `[{"jsonrpc":"2.0","id":7,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`
	mib := bigLine(1 << 20)
	mib16 := bigLine(16 << 20)
	tests := []struct {
		name  string
		steps []feedStep
		want  []want
	}{
		{"request and response pair", []feedStep{
			{stream: StreamClient, data: req + "\n"},
			{stream: StreamAgent, data: resp + "\n"},
		}, []want{
			{wire.DirClient, wire.KindRequest, 0, req, "session/prompt", 0, 2},
			{wire.DirAgent, wire.KindResponse, 0, resp, "session/prompt", 0, 1},
		}},
		{"batch and members", []feedStep{{stream: StreamClient, data: batch + "\n"}}, []want{
			{wire.DirClient, wire.KindBatch, 0, batch, "", 0, 0},
			{wire.DirClient, wire.KindRequest, wire.FlagBatchMember, `{"jsonrpc":"2.0","id":7,"method":"a"}`, "a", 1, 0},
			{wire.DirClient, wire.KindNotification, wire.FlagBatchMember, `{"jsonrpc":"2.0","method":"b"}`, "b", 1, 0},
		}},
		{"stderr lines", []feedStep{{stream: StreamStderr, data: "starting\nready\r\n"}}, []want{
			{wire.DirAgent, wire.KindStderr, 0, "starting", "", 0, 0},
			{wire.DirAgent, wire.KindStderr, wire.FlagCRLF, "ready\r", "", 0, 0},
		}},
		{"partial final line", []feedStep{
			{stream: StreamAgent, data: `{"jsonrpc":"2.0","method":"n"}` + "\n" + `{"jsonrpc":`},
			{stream: StreamAgent, end: true},
		}, []want{
			{wire.DirAgent, wire.KindNotification, 0, `{"jsonrpc":"2.0","method":"n"}`, "n", 0, 0},
			{wire.DirAgent, wire.KindInvalidJSON, wire.FlagPartial, `{"jsonrpc":`, "", 0, 0},
		}},
		{"crlf", []feedStep{{stream: StreamClient, data: `{"jsonrpc":"2.0","method":"n"}` + "\r\n"}}, []want{
			{wire.DirClient, wire.KindNotification, wire.FlagCRLF, `{"jsonrpc":"2.0","method":"n"}` + "\r", "n", 0, 0},
		}},
		{"invalid utf8 and empty line", []feedStep{{stream: StreamAgent, data: "\xff\xfe{\n\n"}}, []want{
			{wire.DirAgent, wire.KindInvalidUTF8, 0, "\xff\xfe{", "", 0, 0},
			{wire.DirAgent, wire.KindNonProtocol, wire.FlagEmpty, "", "", 0, 0},
		}},
		{"line split across chunks", []feedStep{
			{stream: StreamClient, data: `{"jsonrpc":"2.0",`},
			{stream: StreamClient, data: `"method":"x"}` + "\nlog\n"},
		}, []want{
			{wire.DirClient, wire.KindNotification, 0, `{"jsonrpc":"2.0","method":"x"}`, "x", 0, 0},
			{wire.DirClient, wire.KindNonProtocol, 0, "log", "", 0, 0},
		}},
		{"http frame", []feedStep{{stream: StreamClient, data: req, frame: &wire.Envelope{Method: "POST", Path: "/acp", Stream: wire.StreamPOST}}}, []want{
			{wire.DirClient, wire.KindRequest, 0, req, "session/prompt", 0, 0},
		}},
		{"1 MiB line", chunked(StreamAgent, mib+"\n", 64<<10), []want{
			{wire.DirAgent, wire.KindNotification, 0, mib, "big", 0, 0},
		}},
		{"16 MiB line", chunked(StreamAgent, mib16+"\n", 1<<20), []want{
			{wire.DirAgent, wire.KindNotification, 0, mib16, "big", 0, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := createTest(t, WriterOptions{NoFeed: true})
			for _, s := range tt.steps {
				switch {
				case s.frame != nil:
					w.Frame(1, s.stream.Dir(), time.Now().UnixNano(), []byte(s.data), 0, s.frame)
				case s.end:
					w.EndStream(0, s.stream, time.Now().UnixNano())
				default:
					w.Chunk(0, s.stream, time.Now().UnixNano(), []byte(s.data))
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r := openTest(t, w.Path())
			got := readAll(t, r)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d records, want %d", len(got), len(tt.want))
			}
			if r.Last() != uint64(len(tt.want)) {
				t.Errorf("Last() = %d, want %d", r.Last(), len(tt.want))
			}
			for i, wr := range tt.want {
				g := got[i]
				if g.Seq != uint64(i+1) || g.Dir != wr.dir || g.Kind != wr.kind || g.Flags != wr.flags ||
					g.Method != wr.method || g.Parent != wr.parent || g.Peer != wr.peer {
					t.Errorf("record %d = seq %d %v %v %v method %q parent %d peer %d; want %v %v %v %q %d %d",
						i+1, g.Seq, g.Dir, g.Kind, g.Flags.Names(), g.Method, g.Parent, g.Peer,
						wr.dir, wr.kind, wr.flags.Names(), wr.method, wr.parent, wr.peer)
				}
				if !bytes.Equal(g.Body, []byte(wr.body)) {
					t.Errorf("record %d body differs: %d bytes, want %d", i+1, len(g.Body), len(wr.body))
				}
				if g.Size != int64(len(wr.body)) {
					t.Errorf("record %d size %d, want %d", i+1, g.Size, len(wr.body))
				}
			}
			if m := r.Meta(); m.End.IsZero() || m.FormatVersion != FormatVersion || m.Loss != (Loss{}) {
				t.Errorf("meta = %+v", m)
			}
		})
	}
}

func TestPairingAndIndexes(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, CommitRecords: 3})
	lines := []struct {
		s    Stream
		line string
	}{
		{StreamClient, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}`},                 // 1
		{StreamAgent, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-A"}}`},                              // 2
		{StreamClient, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-A"}}`},   // 3
		{StreamAgent, `{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"sess-A"}}`}, // 4: agent's id 1
		{StreamClient, `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"no"}}`},                      // 5: answers 4
		{StreamAgent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-A"}}`},           // 6
		{StreamAgent, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`},                           // 7: answers 3
		{StreamAgent, `{"jsonrpc":"2.0","id":99,"result":{}}`},                                                 // 8: unpaired
	}
	for i, l := range lines {
		w.Chunk(0, l.s, int64(1000+i*1000), []byte(l.line+"\n"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, w.Path())
	pairs := []struct {
		seq, peer uint64
		method    string
		session   string
		latency   time.Duration
		code      int64
	}{
		{1, 2, "session/new", "", 0, 0},
		{2, 1, "session/new", "sess-A", 1000, 0},
		{3, 7, "session/prompt", "sess-A", 0, 0},
		{4, 5, "fs/read_text_file", "sess-A", 0, 0},
		{5, 4, "fs/read_text_file", "sess-A", 1000, -32002},
		{7, 3, "session/prompt", "sess-A", 4000, 0},
		{8, 0, "", "", 0, 0},
	}
	for _, p := range pairs {
		t.Run(fmt.Sprintf("record %d", p.seq), func(t *testing.T) {
			rec, err := r.Record(p.seq)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Peer != p.peer || rec.Method != p.method || rec.Session != p.session || rec.Latency != p.latency || rec.ErrorCode != p.code {
				t.Errorf("got peer %d method %q session %q latency %v code %d; want %d %q %q %v %d",
					rec.Peer, rec.Method, rec.Session, rec.Latency, rec.ErrorCode, p.peer, p.method, p.session, p.latency, p.code)
			}
		})
	}
	lookups := []struct {
		ix   Index
		term string
		want []uint64
	}{
		{IndexMethod, "session/new", []uint64{1, 2}},
		{IndexMethod, "session/prompt", []uint64{3, 7}},
		{IndexMethod, "nope", nil},
		{IndexSession, "sess-A", []uint64{2, 3, 4, 5, 6, 7}},
		{IndexIDClient, "1", []uint64{1, 2}},
		{IndexIDClient, "2", []uint64{3, 7}},
		{IndexIDAgent, "1", []uint64{4, 5}},
		{IndexIDClient, "99", []uint64{8}}, // a response answers the other side's request
		{IndexIDAgent, "99", nil},
	}
	for _, l := range lookups {
		t.Run(fmt.Sprintf("lookup %d %s", l.ix, l.term), func(t *testing.T) {
			got, err := r.Lookup(l.ix, l.term)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, l.want) {
				t.Errorf("Lookup = %v, want %v", got, l.want)
			}
		})
	}
	if _, err := r.Record(9); err == nil {
		t.Error("Record(9) of 8 records succeeded")
	}
}

func TestCloseIdempotentAndMeta(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true, Meta: Meta{Agent: "a", Argv: []string{"agent", "--x"}}})
	w.Chunk(0, StreamClient, 1, []byte(notif(1)+"\n"))
	w.UpdateMeta(func(m *Meta) { m.Exit = &Exit{Code: 130, Signal: "SIGINT"} })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	w.Chunk(0, StreamClient, 2, []byte("late\n")) // after Close: counted, never a panic
	w.Frame(0, wire.DirAgent, 2, []byte("late"), 0, nil)
	w.EndStream(0, StreamClient, 3)
	if fi, err := os.Stat(w.Path()); err != nil {
		t.Fatal(err)
	} else if fi.Size() > 256<<10 {
		t.Errorf("a one-record capture takes %d bytes: not trimmed", fi.Size())
	}
	r := openTest(t, w.Path())
	m := r.Meta()
	if m.Agent != "a" || m.Exit == nil || m.Exit.Code != 130 || m.End.Before(m.Start) || m.Pid != os.Getpid() || m.FormatVersion != FormatVersion {
		t.Errorf("meta = %+v", m)
	}
	if r.Last() != 1 {
		t.Errorf("Last() = %d", r.Last())
	}
}

// TestGivenTimesKept: an import or export passes the original session's
// start and end; the copy must not take the time it was made as its end.
func TestGivenTimesKept(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	end := start.Add(123 * time.Second)
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true, Meta: Meta{Agent: "a", Start: start, End: end}})
	w.Chunk(0, StreamClient, 1, []byte(notif(1)+"\n"))
	if got := w.Meta().End; !got.IsZero() {
		t.Errorf("before Close the capture reads as finished at %v", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m := openTest(t, w.Path()).Meta()
	if !m.Start.Equal(start) || !m.End.Equal(end) {
		t.Errorf("start %v end %v, want %v and %v", m.Start, m.End, start, end)
	}
}

// TestPairsAcrossBlocks answers 600 requests in reverse order, across
// commits and pair blocks, and checks every link both ways.
func TestPairsAcrossBlocks(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true, CommitRecords: 97})
	const n = 600
	for i := 1; i <= n; i++ {
		w.Chunk(0, StreamClient, int64(i), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m"}`+"\n", i)))
	}
	for i := n; i >= 1; i-- {
		w.Chunk(0, StreamAgent, int64(2*n-i), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`+"\n", i)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, w.Path())
	for i := uint64(1); i <= n; i++ {
		resp := 2*n + 1 - i // request i is answered by the (n+1-i)th response
		req, err := r.Record(i)
		if err != nil || req.Peer != resp {
			t.Fatalf("request %d: peer %d, %v; want %d", i, req.Peer, err, resp)
		}
		rec, err := r.Record(resp)
		if err != nil || rec.Peer != i || rec.Method != "m" {
			t.Fatalf("response %d: peer %d method %q, %v; want %d", resp, rec.Peer, rec.Method, err, i)
		}
	}
	seqs, err := r.Lookup(IndexIDClient, "300")
	if err != nil || !slices.Equal(seqs, []uint64{300, 2*n + 1 - 300}) {
		t.Errorf("Lookup(id 300) = %v, %v", seqs, err)
	}
}
