package capture

import (
	"testing"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// TestPercentiles: a percentile shows only with the samples it needs, and
// is one of the samples (nearest rank).
func TestPercentiles(t *testing.T) {
	ms := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(n-i) * time.Millisecond // added in reverse: At sorts
		}
		return out
	}
	tests := []struct {
		name          string
		samples       []time.Duration
		p50, p95, p99 time.Duration // 0: not shown
		max           time.Duration
	}{
		{"none", nil, 0, 0, 0, 0},
		{"one: the max only", ms(1), 0, 0, 0, time.Millisecond},
		{"two: p50", ms(2), time.Millisecond, 0, 0, 2 * time.Millisecond},
		{"19: no p95 yet", ms(19), 10 * time.Millisecond, 0, 0, 19 * time.Millisecond},
		{"20: p95", ms(20), 10 * time.Millisecond, 19 * time.Millisecond, 0, 20 * time.Millisecond},
		{"99: no p99 yet", ms(99), 50 * time.Millisecond, 95 * time.Millisecond, 0, 99 * time.Millisecond},
		{"100: p99", ms(100), 50 * time.Millisecond, 95 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond},
		{"1000", ms(1000), 500 * time.Millisecond, 950 * time.Millisecond, 990 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Latencies
			for _, d := range tt.samples {
				l.Add(d)
			}
			for i, want := range []time.Duration{tt.p50, tt.p95, tt.p99} {
				got, ok := l.At(Percentiles[i])
				if ok != (want != 0) || got != want {
					t.Errorf("%s = %v, %v; want %v, shown %v", Percentiles[i].Name, got, ok, want, want != 0)
				}
			}
			if l.Max() != tt.max || l.Len() != len(tt.samples) {
				t.Errorf("max %v of %d samples, want %v of %d", l.Max(), l.Len(), tt.max, len(tt.samples))
			}
		})
	}
}

func TestTally(t *testing.T) {
	recs := []Record{
		{Msg: protocol.Msg{Seq: 1, Time: 10, Dir: wire.DirClient, Kind: wire.KindRequest, Method: "session/prompt"}, Size: 100},
		{Msg: protocol.Msg{Seq: 2, Time: 20, Dir: wire.DirAgent, Kind: wire.KindNotification, Method: "session/update"}, Size: 50},
		{Msg: protocol.Msg{Seq: 3, Time: 30, Dir: wire.DirAgent, Kind: wire.KindResponse, Method: "session/prompt"}, Size: 30, Peer: 1, Latency: 20},
		{Msg: protocol.Msg{Seq: 4, Time: 40, Dir: wire.DirAgent, Kind: wire.KindRequest, Method: "fs/read_text_file"}, Size: 60},
		{Msg: protocol.Msg{Seq: 5, Time: 50, Dir: wire.DirClient, Kind: wire.KindError, Method: "fs/read_text_file"}, Size: 70, Peer: 4, Latency: 10, ErrorCode: -32002},
		{Msg: protocol.Msg{Seq: 6, Time: 5, Dir: wire.DirAgent, Kind: wire.KindStderr}, Size: 9},
		{Msg: protocol.Msg{Seq: 7, Time: 60, Dir: wire.DirAgent, Kind: wire.KindResponse}, Size: 8},
	}
	tally := NewTally()
	for i := range recs {
		tally.Add(&recs[i])
	}
	if tally.Records != 7 || tally.Bytes != 327 || tally.First != 5 || tally.Last != 60 {
		t.Errorf("tally: %d records, %d bytes, %d..%d", tally.Records, tally.Bytes, tally.First, tally.Last)
	}
	prompt, fs := tally.Methods["session/prompt"], tally.Methods["fs/read_text_file"]
	if prompt.Requests != 1 || prompt.Messages != 2 || prompt.BytesToAgent != 100 || prompt.BytesToClient != 30 || prompt.Latency.Len() != 1 {
		t.Errorf("session/prompt: %+v", prompt)
	}
	if fs.Errors != 1 || fs.BytesToAgent != 70 || fs.BytesToClient != 60 || fs.Latency.Max() != 10 {
		t.Errorf("fs/read_text_file: %+v", fs)
	}
	if tally.Methods["(stderr)"] == nil || tally.Methods["(unpaired)"] == nil || tally.Methods["session/update"].Notifications != 1 {
		t.Errorf("methods: %v", tally.Methods)
	}
	if sorted := tally.Sorted(); sorted[0].Method != "fs/read_text_file" || sorted[1].Method != "session/prompt" {
		t.Errorf("sorted: %s, %s; want most messages first, then by name", sorted[0].Method, sorted[1].Method)
	}
}
