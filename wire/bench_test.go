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
