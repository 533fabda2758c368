package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

var benchFrames = map[string][]byte{
	"update-200B": []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me look at the failing test first."}}}}`),
	"text-16KiB":  []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","content":[{"type":"text","text":"` + strings.Repeat(`func main() {\n\tfmt.Println(\"hello, world\")\n}\n`, 16<<10/52) + `"}]}}}`),
	"lines-1MiB":  []byte(`{"jsonrpc":"2.0","id":9,"result":{"content":"` + strings.Repeat(strings.Repeat("y", 98)+`\n`, 1<<20/100) + `"}}`),
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
// against the Pairer it replaced (one map keyed by direction and id,
// kept below as structKeyPairer) in one run.
func BenchmarkPairer(b *testing.B) {
	const inFlight = 1000
	ids := make([][]byte, 4*inFlight)
	for i := range ids {
		ids[i] = []byte(strconv.Itoa(100000 + i))
	}
	type pairer interface {
		Request(Dir, []byte, pending) (pending, bool)
		Response(Dir, []byte) (pending, bool)
	}
	for _, c := range []struct {
		name string
		p    pairer
	}{{"pairer", NewPairer[pending]()}, {"struct-key-baseline", &structKeyPairer{pending: map[pairKey]pending{}}}} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				c.p.Request(DirClient, ids[i%len(ids)], pending{Seq: uint64(i)})
				if i >= inFlight {
					if _, ok := c.p.Response(DirAgent, ids[(i-inFlight)%len(ids)]); !ok {
						b.Fatal("response not paired")
					}
				}
				i++
			}
		})
	}
}

// pending is what the capture store keeps of a request.
type pending struct {
	Seq             uint64
	Time            int64
	Method, Session string
}

// structKeyPairer is the Pairer as it was before it kept a map per
// direction: the baseline of BenchmarkPairer.
type structKeyPairer struct {
	pending map[pairKey]pending
}

type pairKey struct {
	dir Dir
	id  string
}

func (p *structKeyPairer) Request(dir Dir, id []byte, req pending) (displaced pending, dup bool) {
	k := pairKey{dir, string(id)}
	displaced, dup = p.pending[k]
	p.pending[k] = req
	return displaced, dup
}

func (p *structKeyPairer) Response(dir Dir, id []byte) (pending, bool) {
	if len(id) == 0 || string(id) == "null" {
		return pending{}, false
	}
	k := pairKey{dir.Reverse(), string(id)}
	req, ok := p.pending[k]
	if ok {
		delete(p.pending, k)
	}
	return req, ok
}

// BenchmarkSSEDecoder decodes a stream of events handed over in 32 KiB
// reads, as a reverse proxy's copy loop reads them, against a scan for
// the blank lines alone (the least any decoder does) in one run.
func BenchmarkSSEDecoder(b *testing.B) {
	for _, size := range []int{200, 16 << 10} {
		data := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + strings.Repeat("x", size) + `"}}`)
		var stream []byte
		for len(stream) < 4<<20 {
			stream = AppendSSEEvent(stream, "", data)
		}
		chunks := make([][]byte, 0, len(stream)/(32<<10)+1)
		for rest := stream; len(rest) > 0; {
			n := min(32<<10, len(rest))
			chunks, rest = append(chunks, rest[:n]), rest[n:]
		}
		b.Run(fmt.Sprintf("event=%dB/decoder", size), func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			events := 0
			for b.Loop() {
				var d SSEDecoder
				for _, c := range chunks {
					d.Push(c, func(e *SSEEvent) { events += len(e.Data) & 1 })
				}
			}
			_ = events
		})
		b.Run(fmt.Sprintf("event=%dB/scan-baseline", size), func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			blanks := 0
			for b.Loop() {
				for _, c := range chunks {
					blanks += bytes.Count(c, []byte("\n\n"))
				}
			}
			_ = blanks
		})
	}
}
