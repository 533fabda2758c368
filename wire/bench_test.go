package wire

import (
	"encoding/json"
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
