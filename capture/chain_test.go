package capture

import (
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// chainLink is what a capture between a conductor and a proxy holds: the
// proxy's own conversation (hop 0), what it forwards to its successor
// wrapped (hop 1), a wrapper inside a wrapper (hop 2), and MCP over ACP.
var chainLink = []struct {
	dir  wire.Dir
	body string
}{
	{wire.DirClient, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s0","prompt":[]}}`},
	{wire.DirAgent, `{"jsonrpc":"2.0","id":1,"method":"_proxy/successor/request","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}}`},
	{wire.DirClient, `{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"yo"}}}}}`},
	{wire.DirClient, `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`},
	{wire.DirAgent, `{"jsonrpc":"2.0","id":2,"method":"_proxy/successor","params":{"method":"_proxy/successor/request","params":{"method":"session/new","params":{"cwd":"/w"}}}}`},
	{wire.DirClient, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2"}}`},
	{wire.DirClient, `{"jsonrpc":"2.0","id":7,"method":"_proxy/successor/request","params":{"method":"mcp/message","params":{"connectionId":"c1","method":"tools/call","params":{"name":"echo","arguments":{}}}}}`},
	{wire.DirAgent, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`},
	{wire.DirAgent, `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`},
}

// writeChainLink records chainLink through a real Writer.
func writeChainLink(t *testing.T) string {
	t.Helper()
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true})
	base := time.Now().UnixNano()
	for i, l := range chainLink {
		w.Frame(0, l.dir, base+int64(i)*int64(time.Millisecond), []byte(l.body), 0, nil)
	}
	path := w.Path()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStoreUnwrapsChains: the store keeps a wrapper's bytes but records,
// pairs and filters it as the message it carries, with its hop.
func TestStoreUnwrapsChains(t *testing.T) {
	recs := readAll(t, openTest(t, writeChainLink(t)))
	want := []struct {
		method, session string
		hop             uint8
		peer            uint64
	}{
		{"session/prompt", "s0", 0, 9},
		{"session/prompt", "s1", 1, 4},
		{"session/update", "s1", 1, 0},
		{"session/prompt", "s1", 1, 2},
		{"session/new", "", 2, 6},
		{"session/new", "s2", 2, 5},
		{"mcp/message", "", 1, 8},
		{"mcp/message", "", 1, 7},
		{"session/prompt", "s0", 0, 1},
	}
	for i, w := range want {
		r := recs[i]
		if r.Method != w.method || r.Session != w.session || r.Hop != w.hop || r.Peer != w.peer {
			t.Errorf("record %d: method %q session %q hop %d peer %d, want %+v", r.Seq, r.Method, r.Session, r.Hop, r.Peer, w)
		}
		if string(r.Body) != chainLink[i].body {
			t.Errorf("record %d: the wrapper's bytes changed", r.Seq)
		}
	}
	if recs[3].Latency <= 0 {
		t.Errorf("the answer to a wrapped prompt has no latency")
	}
	// The hop survives JSONL (dump, export, the live feed).
	for _, r := range recs {
		back, err := ParseJSONL(AppendJSONL(nil, &r))
		if err != nil || back.Hop != r.Hop || back.Method != r.Method {
			t.Errorf("record %d through JSONL: hop %d method %q (%v)", r.Seq, back.Hop, back.Method, err)
		}
	}
}

func TestFilterWrapped(t *testing.T) {
	r := openTest(t, writeChainLink(t))
	tests := []struct {
		filter string
		want   []uint64
	}{
		{"method:session/prompt", []uint64{1, 2, 4, 9}},
		{"method:session/prompt hop:1", []uint64{2, 4}},
		{"hop:2", []uint64{5, 6}},
		{"hop>0", []uint64{2, 3, 4, 5, 6, 7, 8}},
		{"hop:0", []uint64{1, 9}},
		{"method:_proxy/*", []uint64{2, 3, 5, 7}},
		{"method:_proxy/successor/notification", []uint64{3}},
		{"method:_proxy/successor", []uint64{5}},
		{"session:s1", []uint64{2, 3, 4}},
		{"update:agent_message_chunk", []uint64{3}},
		{"params.sessionId=s1", []uint64{2, 3}},
		{"params.update.content.text=yo", []uint64{3}},
		{"params.cwd=/w", []uint64{5}},
		{"mcp.method:tools/call", []uint64{7, 8}}, // the answer through its request
		{"mcp.tool:ec*", []uint64{7, 8}},
		{"mcp.tool:other", nil},
		{"id:7", []uint64{7, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			err = ScanMatches(r, f, 0, 0, func(rec *Record, matched bool) bool {
				if matched {
					got = append(got, rec.Seq)
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if !equalFilterSeqs(got, tt.want) {
				t.Errorf("matched %v, want %v", got, tt.want)
			}
		})
	}
}
