package telemetry

import (
	"fmt"
	"testing"
)

// BenchmarkBuilder measures the span builder's cost per record, the CPU a
// live run spends beside forwarding: a stray notification (an event on
// the connection's span) and a whole prompt turn of four records.
func BenchmarkBuilder(b *testing.B) {
	cases := []struct {
		name  string
		steps func(i int) []step
	}{
		{"notification", func(i int) []step {
			return []step{agent(int64(i), fmt.Sprintf(`{"jsonrpc":"2.0","method":"bench/tick","params":{"i":"%010d","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}`, i))}
		}},
		{"turn", func(i int) []step {
			return []step{
				client(int64(i), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}`, i)),
				agent(int64(i), `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}}}}`),
				agent(int64(i), `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":", world"}}}}`),
				agent(int64(i), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, i)),
			}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := newPipeline(Config{QueueSize: 1 << 20}, "discard", discard{}, testMeta, "")
			bl, _ := p.Builder(testMeta, BuilderOptions{})
			var recs []step
			for i := range 1000 {
				recs = append(recs, c.steps(i)...)
			}
			rs := records(recs)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := rs[i%len(rs)]
				r.Seq = uint64(i + 1)
				bl.Record(&r)
			}
			b.StopTimer()
			bl.Finish()
			p.Shutdown()
		})
	}
}
