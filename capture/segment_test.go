package capture

import (
	"reflect"
	"testing"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

func segmentSeeds() [][]byte {
	var e segEncoder
	e.reset()
	recs := []Record{
		{Msg: protocol.Msg{Seq: 10, Time: 5, Dir: wire.DirClient, Kind: wire.KindRequest, ID: []byte("1"), Method: "m", Session: "s", Body: []byte("abc")}, Size: 3},
		{Msg: protocol.Msg{Seq: 11, Time: 9, Dir: wire.DirAgent, Kind: wire.KindError, ID: []byte("1"), Method: "m", Session: "s", HTTP: &wire.Envelope{Method: "POST"}, Body: []byte("de")}, ErrorCode: -32000, Peer: 10, Latency: time.Millisecond},
		{Msg: protocol.Msg{Seq: 12, Time: 9, Dir: wire.DirAgent, Kind: wire.KindNotification, Flags: wire.FlagBatchMember, Parent: 11, Body: nil}},
	}
	for i := range recs {
		e.add(&recs[i])
	}
	plain := e.value()
	e.add(&Record{Msg: protocol.Msg{Seq: 13, Body: []byte("f"), Fault: &protocol.Fault{ID: 1, Action: "drop", Stage: "dropped"}}})
	return [][]byte{plain, e.value(), {segVersion, 0}, {segVersion, 1, 0}, {segVersionFaults, 1, 0, 0}}
}

func TestSegmentRoundTrip(t *testing.T) {
	v := segmentSeeds()[0]
	seg, err := decodeSegment(10, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(seg.recs) != 3 || seg.offsets[3] != 5 {
		t.Fatalf("decoded %d records, %d body bytes", len(seg.recs), seg.offsets[3])
	}
	r := seg.recs[1]
	if r.Seq != 11 || r.Time != 9 || r.Kind != wire.KindError || string(r.ID) != "1" || r.Method != "m" || r.Session != "s" ||
		r.ErrorCode != -32000 || r.Peer != 10 || r.Latency != time.Millisecond || r.HTTP == nil || r.HTTP.Method != "POST" {
		t.Errorf("record 11 = %+v", r)
	}
	if seg.recs[2].Parent != 11 || seg.recs[2].Flags != wire.FlagBatchMember {
		t.Errorf("record 12 = %+v", seg.recs[2])
	}
	body, err := seg.body([]byte("abcde"), 11)
	if err != nil || string(body) != "de" {
		t.Errorf("body(11) = %q, %v", body, err)
	}
	if _, err := seg.body([]byte("abcd"), 11); err == nil {
		t.Error("a short bodies value was accepted")
	}
	for cut := 0; cut < len(v); cut++ {
		if _, err := decodeSegment(10, v[:cut]); err == nil {
			t.Errorf("a segment cut at %d of %d decoded", cut, len(v))
		}
	}
}

func FuzzDecodeSegment(f *testing.F) {
	for _, s := range segmentSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		seg, err := decodeSegment(1, v)
		if err != nil {
			return
		}
		for i := range seg.recs {
			if seg.offsets[i+1] < seg.offsets[i] {
				t.Fatalf("offsets go backwards: %v", seg.offsets)
			}
		}
		all := make([]byte, min(seg.offsets[len(seg.offsets)-1], 1<<20))
		for i := range seg.recs {
			seg.body(all, seg.first+uint64(i)) // must not panic
		}
	})
}

// TestSegmentSharedEnvelopes encodes records that share envelopes, as an
// SSE response's events do, between others: each decodes to its own.
func TestSegmentSharedEnvelopes(t *testing.T) {
	a := &wire.Envelope{Method: "GET", Stream: wire.StreamConnection}
	b := &wire.Envelope{Method: "GET", Stream: wire.StreamConnection, EventID: "7"}
	envs := []*wire.Envelope{a, a, nil, b, a, b}
	var e segEncoder
	e.reset()
	for i, env := range envs {
		e.add(&Record{Msg: protocol.Msg{Seq: uint64(i + 1), HTTP: env, Body: []byte("x")}})
	}
	seg, err := decodeSegment(1, e.value())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range envs {
		got := seg.recs[i].HTTP
		switch {
		case want == nil && got != nil:
			t.Errorf("record %d: envelope %+v, want none", i+1, got)
		case want != nil && (got == nil || !reflect.DeepEqual(got, want)):
			t.Errorf("record %d: envelope %+v, want %+v", i+1, got, want)
		}
	}
}
