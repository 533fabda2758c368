package capture

import (
	"testing"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// TestAlteredRecords checks that what acpscope altered is stored with its
// fault, read back by the reader and the JSONL feed, and that a replaced
// original is not paired: its changed copy is what the answer pairs with.
func TestAlteredRecords(t *testing.T) {
	w := createTest(t, WriterOptions{})
	replaced := &protocol.Fault{ID: 1, Action: protocol.ActionRewrite, Stage: protocol.StageReplaced, Rule: "r", By: protocol.ByPlan}
	forwarded := &protocol.Fault{ID: 1, Action: protocol.ActionRewrite, Stage: protocol.StageForwarded, Rule: "r", By: protocol.ByPlan, Arrived: 10}
	w.Chunk(0, StreamClient, 5, []byte("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\n"))
	w.Altered(0, wire.DirClient, 10, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/a"}}`), nil, replaced)
	w.Altered(0, wire.DirClient, 11, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/b"}}`), nil, forwarded)
	w.Chunk(0, StreamAgent, 12, []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"))
	path := w.Path()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, openTest(t, path))
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	if recs[0].Fault != nil {
		t.Errorf("record 1 has a fault: %+v", recs[0].Fault)
	}
	if f := recs[1].Fault; f == nil || *f != *replaced || recs[1].Peer != 0 {
		t.Errorf("record 2: fault %+v peer %d, want %+v unpaired", f, recs[1].Peer, replaced)
	}
	if f := recs[2].Fault; f == nil || *f != *forwarded || recs[2].Peer != 4 {
		t.Errorf("record 3: fault %+v peer %d, want %+v paired with 4", f, recs[2].Peer, forwarded)
	}
	if recs[3].Peer != 3 || recs[3].Method != "session/new" {
		t.Errorf("the answer paired with %d (%q), want 3", recs[3].Peer, recs[3].Method)
	}
	back, err := ParseJSONL(AppendJSONL(nil, &recs[2]))
	if err != nil || back.Fault == nil || *back.Fault != *forwarded {
		t.Errorf("JSONL round trip: %+v, %v", back.Fault, err)
	}
}

func TestSegmentFaultTable(t *testing.T) {
	var e segEncoder
	e.reset()
	f := &protocol.Fault{ID: 7, Action: protocol.ActionDrop, Stage: protocol.StageDropped, By: protocol.BySend}
	recs := []Record{
		{Msg: protocol.Msg{Seq: 1, Dir: wire.DirClient, Kind: wire.KindNotification, Body: []byte("a")}},
		{Msg: protocol.Msg{Seq: 2, Dir: wire.DirClient, Kind: wire.KindNotification, Body: []byte("b"), Fault: f}},
	}
	for i := range recs {
		e.add(&recs[i])
	}
	v := e.value()
	if v[0] != segVersionFaults {
		t.Fatalf("version %d, want %d", v[0], segVersionFaults)
	}
	seg, err := decodeSegment(1, v)
	if err != nil {
		t.Fatal(err)
	}
	if seg.recs[0].Fault != nil || seg.recs[1].Fault == nil || *seg.recs[1].Fault != *f {
		t.Errorf("faults %+v %+v", seg.recs[0].Fault, seg.recs[1].Fault)
	}
	for cut := 0; cut < len(v); cut++ {
		if _, err := decodeSegment(1, v[:cut]); err == nil {
			t.Errorf("a segment cut at %d of %d decoded", cut, len(v))
		}
	}
	e.reset()
	e.add(&Record{Msg: protocol.Msg{Seq: 1, Body: []byte("a")}})
	if v := e.value(); v[0] != segVersion {
		t.Errorf("a segment without faults has version %d, want %d", v[0], segVersion)
	}
}
