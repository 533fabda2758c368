package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/internal/wsframe"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// FuzzRelayLeg feeds one leg of the byte relay whatever bytes the fuzzer
// makes, framed or not: what comes out must be exactly what went in,
// unless a message crossed the limit, and then what came before it.
func FuzzRelayLeg(f *testing.F) {
	key := &[4]byte{1, 2, 3, 4}
	f.Add(wsFrame(true, false, wsframe.Text, []byte(`{"jsonrpc":"2.0","method":"x"}`), key))
	f.Add(append(wsFrame(false, false, wsframe.Binary, []byte("ab"), nil), wsFrame(true, false, wsframe.Continuation, []byte("cd"), nil)...))
	f.Add(wsFrame(true, true, wsframe.Text, []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, nil))
	f.Add(wsFrame(true, false, wsframe.Close, []byte{0x03, 0xe8, 'o', 'k'}, key))
	f.Add([]byte{0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2})
	f.Add([]byte{0x81, 0x7e, 0x10})
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, gather := range []bool{true, false} { // capture on, and off
			got, refused, gathered, err := runLeg(in, 1<<16, gather, &netkit.Recorder{})
			if gathered && !gather {
				t.Fatal("gathered a message with nothing to record it")
			}
			if refused {
				got = trimClose(t, got)
				if !bytes.HasPrefix(in, got) {
					t.Fatalf("gather %v: refused after %d bytes that are not what came in", gather, len(got))
				}
				continue
			}
			if !bytes.Equal(got, in) {
				t.Fatalf("gather %v: %d bytes in, %d out (%v): %x", gather, len(in), len(got), err, got)
			}
		}
	})
}

// runLeg runs one leg of a byte relay over in, with limit, gathering
// messages for rec or not, and returns what came out, whether a message
// was refused, whether the leg ever took memory to gather one in, and
// the leg's end.
func runLeg(in []byte, limit int64, gather bool, rec *netkit.Recorder) (out []byte, refused, gathered bool, end error) {
	ours, theirs := net.Pipe()
	outc := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(theirs); outc <- b }() // the far side: reads all
	r := &byteRelay{rec: rec, limit: limit, gather: gather, msgEnv: &wire.Envelope{},
		env: func() *wire.Envelope { return &wire.Envelope{} }, warn: func(string) {}}
	back, source := net.Pipe()
	go io.Copy(io.Discard, source) // the source's side: takes a refusal's close
	l := &relayLeg{r: r, dir: wire.DirAgent, src: bufio.NewReaderSize(bytes.NewReader(in), 4096),
		dst: &wsSide{c: ours}, back: &wsSide{c: back, masked: true}}
	e := l.run()
	gathered = l.msgBuf != nil || cap(l.msg) != 0
	for _, f := range rec.All() {
		gathered = gathered || f.Body != ""
	}
	ours.Close()
	back.Close()
	source.Close()
	return <-outc, r.refused.Load(), gathered, e.err
}

// trimClose takes the relay's own close off the end of what a refusal
// left on the wire.
func trimClose(t *testing.T, b []byte) []byte {
	for i := len(b) - 2; i >= 0; i-- {
		h, n, err := wsframe.ParseHeader(b[i:])
		if err == nil && n > 0 && h.Op == wsframe.Close && int64(len(b)-i-n) == h.Len && h.Len > 2 {
			if code, _ := wsframe.ParseClose(b[i+n:]); code == websocket.CloseMessageTooBig {
				return b[:i]
			}
		}
	}
	t.Fatalf("a refusal without its close: %x", b)
	return nil
}
