package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// TestWebSocketLentMessages echoes messages that fill the size classes
// the relay's buffers come in, or pass them by a byte, through the proxy
// into a real capture, in frames of 1 KiB and whole: each message is
// lent to the capture from a buffer that goes back to its pool once the
// capture is done with it, so a buffer given back too early would be
// reused for a later message and the capture would hold that one's
// bytes instead. Every message must be recorded exactly, both ways.
func TestWebSocketLentMessages(t *testing.T) {
	var shifts []int // class edges: the smallest, one copied (up to keptMessage), lent into a segment, lent whole
	for _, shift := range []int{minMsgShift, 15, 16, 17, 18, 21, maxMsgShift} {
		if shift <= 21 || !raceEnabled { // -race slows the relay's and the capture's loops tenfold
			shifts = append(shifts, shift)
		}
	}
	var msgs []string
	add := func(n int) { // a message of exactly n bytes, its own
		head := fmt.Sprintf(`{"jsonrpc":"2.0","method":"m%d","params":{"p":"`, len(msgs))
		pattern := fmt.Sprintf("<%d>", len(msgs))
		pad := max(0, n-len(head)-len(`"}}`))
		msgs = append(msgs, head+strings.Repeat(pattern, pad/len(pattern)+1)[:pad]+`"}}`)
	}
	for _, shift := range shifts {
		add(1 << shift)   // fills its class
		add(1<<shift + 1) // one past it
	}
	add(1<<maxMsgShift + 1) // past the largest class: memory of its own, even under -race
	add(100)                // copied: each leg ends holding its buffer
	for _, frame := range []int{1 << 10, 64 << 10} {
		t.Run(fmt.Sprintf("frames of %d bytes", frame), func(t *testing.T) {
			p, w, path, front := capturingProxy(t, netkit.H1, wsEcho(websocket.Upgrader{WriteBufferSize: frame}))
			d := websocket.Dialer{WriteBufferSize: frame}
			c, _, err := d.Dial("ws"+strings.TrimPrefix(front.URL, "http")+"/acp", nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range msgs {
				if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
					t.Fatal(err)
				}
				_, echo, err := c.ReadMessage()
				if err != nil || string(echo) != m {
					t.Fatalf("message %d (%d bytes): echo of %d bytes, %v", i, len(m), len(echo), err)
				}
			}
			c.Close()
			p.Close()
			front.Close()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if st := w.Stats(); st.Loss.Messages != 0 {
				t.Fatalf("capture lost %d messages: %+v", st.Loss.Messages, st)
			}
			// The relays end once Close has closed their sockets.
			netkit.WaitLong(t, "every message buffer back in its pool", func() bool { return p.held.msgBufs.Load() == 0 })
			r, err := capture.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got []string
			r.Scan(1, func(rec *capture.Record) bool {
				if rec.Kind == wire.KindNonProtocol {
					return true // the upgrade, the close
				}
				body, err := r.Body(rec.Seq)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, rec.Dir.String()+" "+string(body))
				return true
			})
			if len(got) != 2*len(msgs) {
				t.Fatalf("recorded %d messages, want %d", len(got), 2*len(msgs))
			}
			for i, m := range msgs {
				for j, dir := range []string{"client", "agent"} {
					if g := got[2*i+j]; g != dir+" "+m {
						t.Fatalf("message %d from the %s recorded as %.40q… (%d bytes), want %.40q… (%d bytes)", i, dir, g, len(g), dir+" "+m, len(dir)+1+len(m))
					}
				}
			}
		})
	}
}
