package inspector

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// TestStatsCallsAndMessages: a method's row counts its calls (requests)
// apart from its messages (requests, responses), so two prompts read as
// two calls, not four.
func TestStatsCallsAndMessages(t *testing.T) {
	s := &stats{methods: map[string]*methodStats{}, kinds: map[wire.Kind]int{}, sampleStep: 1}
	recs := []capture.Record{
		{Msg: protocol.Msg{Kind: wire.KindRequest, Method: "session/prompt", Time: 1}, Size: 100},
		{Msg: protocol.Msg{Kind: wire.KindNotification, Method: "session/update", Time: 2}, Size: 50},
		{Msg: protocol.Msg{Kind: wire.KindResponse, Method: "session/prompt", Time: 3}, Size: 40, Peer: 1, Latency: 2 * time.Millisecond},
		{Msg: protocol.Msg{Kind: wire.KindRequest, Method: "session/prompt", Time: 4}, Size: 100},
		{Msg: protocol.Msg{Kind: wire.KindError, Method: "session/prompt", Time: 5}, Size: 60, Peer: 4, Latency: time.Millisecond},
	}
	for i := range recs {
		s.add(&recs[i])
	}
	out := s.render(80)
	tests := []struct{ method, row string }{
		{"session/prompt", `session/prompt\s+2\s+4\s+\[red\]\s+1\[-\]`},
		{"session/update", `session/update\s+-\s+1\s+0`},
	}
	for _, tt := range tests {
		if !regexp.MustCompile(tt.row).MatchString(out) {
			t.Errorf("%s row does not match %q:\n%s", tt.method, tt.row, out)
		}
	}
	if !strings.Contains(out, "calls") || !strings.Contains(out, "msgs") {
		t.Errorf("header lacks calls and msgs:\n%s", out)
	}
}
