package protocol

import (
	"bytes"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// fuzzMsgs turns arbitrary bytes into a capture: one frame per line, the
// first byte of each line choosing its direction, flags and envelope.
func fuzzMsgs(data []byte) []Msg {
	var msgs []Msg
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		ctl, body := line[0], line[1:]
		dir := wire.DirClient
		if ctl&1 != 0 {
			dir = wire.DirAgent
		}
		m := FromLine(uint64(i+1), dir, body)
		if ctl&2 != 0 {
			m.Flags |= wire.FlagPartial
		}
		if ctl&4 != 0 {
			methods := []string{"POST", "GET", "DELETE"}
			streams := []string{wire.StreamPOST, wire.StreamHTTPControl, wire.StreamPOSTReply}
			m.HTTP = &wire.Envelope{Method: methods[int(ctl>>3)%3], Stream: streams[int(ctl>>5)%3], Status: []int{0, 200, 202, 400, 101}[int(ctl)%5],
				ConnectionID: string(body[:min(len(body), 2)]), Headers: map[string]string{"content-type": "application/json"}}
		}
		if ctl&8 != 0 && len(msgs) > 0 {
			m.Parent = msgs[len(msgs)-1].Seq
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// FuzzLint runs lint, the transcript builder and run rebuilding over
// arbitrary message sequences: none may panic, and findings must name
// only sequence numbers of the capture.
func FuzzLint(f *testing.F) {
	f.Add([]byte("\x00{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n\x01{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1}}"))
	f.Add([]byte("\x00[]\n\x01[]\n\x00[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/prompt\"},1]\n\x01[{\"id\":1,\"result\":{}}]"))
	f.Add([]byte("\x01{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"t\",\"content\":[{\"type\":\"diff\"}],\"locations\":[{\"line\":1.5}]}}}"))
	f.Add([]byte("\x04{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n\x0d{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\x2c"))
	f.Add([]byte("\x00{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"agents/run\",\"params\":{\"_meta\":{\"progressToken\":1}}}\n\x01{\"jsonrpc\":\"2.0\",\"method\":\"notifications/agents/run/progress\",\"params\":{\"progressToken\":1,\"delta\":[null,1]}}"))
	f.Add([]byte("\x00{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"_proxy/initialize\",\"params\":{\"protocolVersion\":1}}\n\x01{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"_proxy/successor/request\",\"params\":{\"method\":\"initialize\",\"params\":{\"protocolVersion\":2}}}\n\x00{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":2}}\n\x00{\"jsonrpc\":\"2.0\",\"method\":\"_proxy/successor\",\"params\":{\"method\":\"mcp/message\",\"params\":{\"connectionId\":\"c\",\"method\":\"tools/call\"}}}"))
	f.Add([]byte("\x01{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"state_update\",\"state\":\"idle\",\"stopReason\":\"_x\"}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := fuzzMsgs(data)
		for _, finding := range Lint(msgs, LintOptions{Finished: true}) {
			if _, ok := LookupRule(finding.Rule); !ok {
				t.Fatalf("finding of unknown rule %q", finding.Rule)
			}
			for _, s := range finding.Seqs {
				if s == 0 || s > uint64(len(data)+1) {
					t.Fatalf("finding %s names seq %d", finding.Rule, s)
				}
			}
		}
		tr := BuildTranscript(msgs)
		var buf bytes.Buffer
		if err := RenderMarkdown(&buf, tr, RenderOptions{}); err != nil {
			t.Fatal(err)
		}
		RunOutputs(msgs)
		MCPCounts(msgs)
		NegotiatedVersion(msgs)
	})
}
