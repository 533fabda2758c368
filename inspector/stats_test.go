package inspector

import (
	"fmt"
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
	s := &stats{tally: capture.NewTally(), kinds: map[wire.Kind]int{}, sampleStep: 1}
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

// pingSource has n ping requests answered after 1, 2, … n ms.
func pingSource(n int) *memSource {
	src := newMemSource("ping-agent")
	at := src.meta.Start
	for i := 1; i <= n; i++ {
		src.add(wire.DirClient, at, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{}}`, i), false)
		src.add(wire.DirAgent, at.Add(time.Duration(i)*time.Millisecond), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i), false)
		at = at.Add(time.Second)
	}
	return src
}

// TestStatisticsFitAndSayTheirSamples: at 80×24 every column of the
// statistics is on screen, the percentiles say how many samples they
// rest on, and none is shown from too few.
func TestStatisticsFitAndSayTheirSamples(t *testing.T) {
	h := startUI(t, Options{source: pingSource(25)})
	h.waitFor("#1 pretty")
	h.typeKeys("s")
	h.waitFor("50 messages", "bytes", "p99", "max")
	var traffic, latency string
	for _, l := range h.lines() {
		switch {
		case strings.Contains(l, "ping") && strings.Contains(l, "KiB"):
			traffic = l
		case strings.Contains(l, "ping") && strings.Contains(l, "ms"):
			latency = l
		}
	}
	// 25 calls, 50 messages, 0 errors, and the bytes.
	if !regexp.MustCompile(`ping\s+25\s+50\s+0\s+\d+\.\d KiB`).MatchString(traffic) {
		t.Errorf("the ping counts are cut or wrong at 80 columns: %q\n%s", traffic, h.text())
	}
	// n 25; p50 13ms, p95 24ms, p99 not from 25 samples, max 25ms.
	if !regexp.MustCompile(`ping\s+25\s+13ms\s+24ms\s+-\s+25ms`).MatchString(latency) {
		t.Errorf("the ping latencies read %q\n%s", latency, h.text())
	}
	h.waitFor("a percentile needs p50 ≥2, p95 ≥20, p99 ≥100")
}

// TestStatisticsCountMCP: MCP carried over ACP gets a table of its own,
// by MCP method, with the failed tool calls apart from errors.
func TestStatisticsCountMCP(t *testing.T) {
	src := newMemSource("mcp-agent")
	at := src.meta.Start
	for i, l := range []struct {
		dir  wire.Dir
		body string
	}{
		{wire.DirAgent, `{"jsonrpc":"2.0","id":1,"method":"mcp/message","params":{"connectionId":"c","method":"tools/call","params":{"name":"grep"}}}`},
		{wire.DirClient, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`},
		{wire.DirAgent, `{"jsonrpc":"2.0","id":2,"method":"mcp/message","params":{"connectionId":"c","method":"tools/call","params":{"name":"ls"}}}`},
		{wire.DirClient, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
	} {
		src.add(l.dir, at.Add(time.Duration(i)*time.Millisecond), l.body, false)
	}
	h := startUI(t, Options{source: src})
	h.waitFor("#1 pretty")
	h.typeKeys("s")
	h.waitFor("MCP over ACP", "failed")
	var row string
	for _, l := range h.lines() {
		if strings.Contains(l, "tools/call ") && row == "" {
			row = l
		}
	}
	// calls 2, notes -, errors -, failed 1
	if !regexp.MustCompile(`tools/call\s+2\s+-\s+-\s+1`).MatchString(row) {
		t.Errorf("the MCP row reads %q\n%s", row, h.text())
	}
}
