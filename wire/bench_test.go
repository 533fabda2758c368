package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

var benchFrames = map[string][]byte{
	"update-200B": []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me look at the failing test first."}}}}`),
	"image-1MiB":  []byte(`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("iVBORw0KGgo", 1<<20/11) + `"}]}}`),
}

// BenchmarkClassify compares Classify with the same classification done
// on top of encoding/json.Valid, the baseline it replaced, in one run.
func BenchmarkClassify(b *testing.B) {
	for name, frame := range benchFrames {
		b.Run(name+"/wire", func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				Classify(frame)
			}
		})
		b.Run(name+"/encoding-json-baseline", func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				if json.Valid(frame) {
					var m Message
					classifyObject(frame, &m, false)
				}
			}
		})
	}
}

// BenchmarkPairer pairs round trips with a thousand requests in flight,
// against the same bookkeeping in one map keyed by (direction, id), the
// baseline it replaced, in one run.
func BenchmarkPairer(b *testing.B) {
	const inFlight = 1000
	ids := make([][]byte, 4*inFlight)
	for i := range ids {
		ids[i] = []byte(strconv.Itoa(100000 + i))
	}
	b.Run("pairer", func(b *testing.B) {
		p := NewPairer()
		i := 0
		for b.Loop() {
			p.Request(Pending{Dir: DirClient, ID: string(ids[i%len(ids)]), Seq: uint64(i)})
			if i >= inFlight {
				if _, ok := p.Response(DirAgent, ids[(i-inFlight)%len(ids)]); !ok {
					b.Fatal("response not paired")
				}
			}
			i++
		}
	})
	b.Run("struct-key-baseline", func(b *testing.B) {
		type key struct {
			dir Dir
			id  string
		}
		m := map[key]Pending{}
		i := 0
		for b.Loop() {
			m[key{DirClient, string(ids[i%len(ids)])}] = Pending{Dir: DirClient, ID: string(ids[i%len(ids)]), Seq: uint64(i)}
			if i >= inFlight {
				k := key{DirAgent.Reverse(), string(ids[(i-inFlight)%len(ids)])}
				if _, ok := m[k]; !ok {
					b.Fatal("response not paired")
				}
				delete(m, k)
			}
			i++
		}
	})
}
