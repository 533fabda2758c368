package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/internal/wsframe"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// FuzzRelayLeg feeds one leg of the byte relay whatever bytes the fuzzer
// makes, framed or not, with capture on (gathering messages) and off:
// each must pass on exactly what legOracle says, the bytes up to the
// first data frame that takes its message past the limit, and then
// refuse, or everything if none does.
func FuzzRelayLeg(f *testing.F) {
	key := &[4]byte{1, 2, 3, 4}
	part := bytes.Repeat([]byte("a"), 600)
	f.Add(wsFrame(true, false, wsframe.Text, []byte(`{"jsonrpc":"2.0","method":"x"}`), key))
	f.Add(append(wsFrame(false, false, wsframe.Binary, []byte("ab"), nil), wsFrame(true, false, wsframe.Continuation, []byte("cd"), nil)...))
	f.Add(wsFrame(true, true, wsframe.Text, []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, nil))
	f.Add(wsFrame(true, false, wsframe.Close, []byte{0x03, 0xe8, 'o', 'k'}, key))
	f.Add([]byte{0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2})
	// a ping declaring more than a control frame may carry
	f.Add(append([]byte{0x89, 0x7e, 0x10, 0x00}, bytes.Repeat([]byte("p"), 5000)...))
	// a header no frame may have, then more than the leg's read buffer
	f.Add(append([]byte{0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0}, bytes.Repeat([]byte("z"), 6000)...))
	f.Add([]byte{0x81, 0x7e, 0x10})
	// a fragmented message that crosses the limit in its second fragment
	f.Add(append(wsFrame(false, false, wsframe.Text, part, key), wsFrame(true, false, wsframe.Continuation, part, key)...))
	// a whole message, then a stray continuation: each under the limit
	f.Add(append(wsFrame(true, false, wsframe.Text, part, key), wsFrame(true, false, wsframe.Continuation, part, key)...))
	// a new data frame while a fragmented message is open, then a continuation
	f.Add(bytes.Join([][]byte{wsFrame(false, false, wsframe.Text, part, key), wsFrame(false, false, wsframe.Binary, part[:100], key),
		wsFrame(true, false, wsframe.Continuation, part, key)}, nil))
	// a ping and a close inside a fragmented message, zero-length fragments
	f.Add(bytes.Join([][]byte{wsFrame(false, false, wsframe.Text, nil, key), wsFrame(true, false, wsframe.Ping, nil, key),
		wsFrame(false, false, wsframe.Continuation, part, key), wsFrame(true, false, wsframe.Close, []byte{3, 0xe8}, key),
		wsFrame(false, false, wsframe.Continuation, nil, key), wsFrame(true, false, wsframe.Continuation, part, key)}, nil))
	// a continuation whose declared length overflows the message's size
	f.Add(append(wsFrame(false, false, wsframe.Text, []byte("a"), nil), 0x80, 0x7f, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'b'))
	const limit = 1024
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantRefused, malformed := legOracle(in, limit)
		for _, gather := range []bool{true, false} { // capture on, and off
			rec := &netkit.Recorder{}
			got, refused, gathered, err := runLeg(in, limit, gather, rec)
			if n := malformedRecords(rec); malformed != errors.Is(err, errMalformed) || malformed && n != 1 || !malformed && n != 0 {
				t.Fatalf("gather %v: ended by %v with %d 1002s recorded; malformed: %v", gather, err, n, malformed)
			}
			if gathered && !gather {
				t.Fatal("gathered a message with nothing to record it")
			}
			if refused {
				got = trimClose(t, got)
			}
			if refused != wantRefused || !bytes.Equal(got, want) {
				t.Fatalf("gather %v: refused %v after %d bytes (%v), want refused %v after %d", gather, refused, len(got), err, wantRefused, len(want))
			}
		}
	})
}

// legOracle says, from the frames alone, what one leg passes on with
// limit: everything, or the bytes before the first data frame that
// takes its message past the limit (a continuation adds to the message
// open, another data frame starts one), and then a refusal; or up to
// the limit's worth of bytes from a frame no peer may send (a length
// with its top bit set, a control frame over 125 bytes), which is
// malformed.
func legOracle(in []byte, limit int64) (passed []byte, refused, malformed bool) {
	var open int64 // the payload of the message open so far
	for pos := 0; ; {
		h, n, err := wsframe.ParseHeader(in[pos:])
		if err != nil || n > 0 && h.Op.IsControl() && h.Len > wsframe.MaxControlPayload {
			// a frame no peer may send: passed as it came, up to the limit
			return in[:pos+int(min(int64(len(in)-pos), limit))], false, true
		}
		if n == 0 { // the end, or a header cut by it: passed as it came
			return in, false, false
		}
		if !h.Op.IsControl() {
			if h.Op != wsframe.Continuation {
				open = 0
			}
			if h.Len > limit-open {
				return in[:pos], true, false
			}
			if open += h.Len; h.Fin {
				open = 0
			}
		}
		if int64(len(in)-pos-n) < h.Len { // cut short: passed as far as it came
			return in, false, false
		}
		pos += n + int(h.Len)
	}
}

// runLeg runs one leg of a byte relay over in, with limit, gathering
// messages for rec or not, and returns what came out, whether a message
// was refused, whether the leg ever took memory to gather one in, and
// the leg's end.
func runLeg(in []byte, limit int64, gather bool, rec *netkit.Recorder) (out []byte, refused, gathered bool, end error) {
	out, l, end := driveLeg(in, limit, gather, rec)
	gathered = l.msgBuf != nil || cap(l.msg) != 0
	for _, f := range rec.All() {
		gathered = gathered || f.Body != ""
	}
	return out, l.r.refused.Load(), gathered, end
}

// driveLeg runs one leg over in until it ends, and returns what came
// out and the leg, as it was left.
func driveLeg(in []byte, limit int64, gather bool, rec *netkit.Recorder) (out []byte, l *relayLeg, end error) {
	ours, theirs := net.Pipe()
	outc := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(theirs); outc <- b }() // the far side: reads all
	r := &byteRelay{rec: rec, limit: limit, gather: gather, msgEnv: &wire.Envelope{},
		env: func() *wire.Envelope { return &wire.Envelope{} }, warn: func(string) {}}
	back, source := net.Pipe()
	go io.Copy(io.Discard, source) // the source's side: takes a refusal's close
	l = &relayLeg{r: r, dir: wire.DirAgent, src: bufio.NewReaderSize(bytes.NewReader(in), 4096),
		dst: &wsSide{c: ours}, back: &wsSide{c: back, masked: true}}
	e := l.run()
	ours.Close()
	back.Close()
	source.Close()
	return <-outc, l, e.err
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

// malformedRecords counts the 1002s a leg recorded for a malformed frame
// (not a close frame's own 1002, which a peer may send).
func malformedRecords(rec *netkit.Recorder) int {
	n := 0
	for _, f := range rec.All() {
		if strings.HasPrefix(f.Env.Headers["ws-close"], "1002 the agent's side sent a malformed WebSocket frame") {
			n++
		}
	}
	return n
}
