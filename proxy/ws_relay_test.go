package proxy

import (
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/internal/wsframe"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// wsFrame builds a frame byte by byte, masked when key is given.
func wsFrame(fin, compressed bool, op wsframe.Opcode, payload []byte, key *[4]byte) []byte {
	b0 := byte(op)
	if fin {
		b0 |= 0x80
	}
	if compressed {
		b0 |= 0x40
	}
	var mask byte
	if key != nil {
		mask = 0x80
	}
	b := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		b = append(b, mask|byte(n))
	case n < 1<<16:
		b = binary.BigEndian.AppendUint16(append(b, mask|126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, mask|127), uint64(n))
	}
	if key == nil {
		return append(b, payload...)
	}
	b = append(b, key[:]...)
	start := len(b)
	b = append(b, payload...)
	wsframe.Unmask(b[start:], *key, 0)
	return b
}

// deflater compresses messages as a permessage-deflate peer with context
// takeover does.
type deflater struct {
	buf bytes.Buffer
	w   *flate.Writer
}

func (d *deflater) compress(msg string) []byte {
	if d.w == nil {
		d.w, _ = flate.NewWriter(&d.buf, flate.DefaultCompression)
	}
	d.buf.Reset()
	d.w.Write([]byte(msg))
	d.w.Flush()
	return bytes.TrimSuffix(bytes.Clone(d.buf.Bytes()), []byte{0, 0, 0xff, 0xff})
}

// rawUpstream answers one upgrade by hand, agreeing to permessage-deflate,
// writes its frames, and hands over every byte the client sent after the
// upgrade once the client's side has ended.
func rawUpstream(t *testing.T, frames []byte, got chan<- []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Accept: %s\r\nSec-WebSocket-Extensions: %s\r\n%s: raw-1\r\n\r\n",
			base64.StdEncoding.EncodeToString(sum[:]), r.Header.Get("Sec-WebSocket-Extensions"), acphttp.HeaderConnectionID)
		rw.Write(frames)
		rw.Flush()
		all, _ := io.ReadAll(rw)
		got <- all
	})
}

// within waits for a value from ch, generously: a minute.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("waited a minute for %s", what)
		var zero T
		return zero
	}
}

// rawClient sends an upgrade to front's /acp by hand, with the extra
// header lines given, and reads the 101.
func rawClient(t *testing.T, front, extra string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	host := strings.TrimPrefix(front, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /acp HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n%s\r\n", host, extra)
	c.SetReadDeadline(time.Now().Add(time.Minute)) // generous: every read waits on the proxy at most this long
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	return c, br, resp
}

// TestWebSocketBytesExact sends frames no WebSocket library would write
// (a fragmented message with a ping between its fragments, compressed
// messages that refer back to earlier ones, a binary frame longer than
// the relay's buffer, each in pieces) and checks that each side receives
// exactly the bytes the other sent, while the capture holds each message
// whole, unmasked and decoded.
func TestWebSocketBytesExact(t *testing.T) {
	key := &[4]byte{0x37, 0xfa, 0x21, 0x3d}
	var toAgent deflater
	big := bytes.Repeat([]byte{0, 1, 2, 3, 0xfe}, 30_000)
	update := `{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + strings.Repeat("tok ", 400) + `"}}`
	clientFrames := bytes.Join([][]byte{
		wsFrame(false, false, wsframe.Text, []byte(`{"jsonrpc":"2.0",`), key),
		wsFrame(true, false, wsframe.Ping, []byte("p1"), key),
		wsFrame(true, false, wsframe.Continuation, []byte(`"id":1,"method":"a"}`), key),
		wsFrame(true, true, wsframe.Text, toAgent.compress(`{"jsonrpc":"2.0","id":2,"method":"b"}`), key),
		wsFrame(true, true, wsframe.Text, toAgent.compress(`{"jsonrpc":"2.0","id":3,"method":"b"}`), key),
		wsFrame(true, false, wsframe.Binary, big, key),
		wsFrame(true, false, wsframe.Close, append([]byte{0x03, 0xe8}, "bye"...), key),
	}, nil)
	// The agent's second compressed message refers back to its first, and
	// comes in two fragments that split its compressed bytes.
	second := fromAgentSplit(update)
	agentFrames := bytes.Join([][]byte{
		wsFrame(true, false, wsframe.Text, []byte(`{"jsonrpc":"2.0","method":"hello"}`), nil),
		wsFrame(true, true, wsframe.Text, second[0], nil),
		wsFrame(false, true, wsframe.Text, second[1][:7], nil),
		wsFrame(true, false, wsframe.Continuation, second[1][7:], nil),
		wsFrame(true, false, wsframe.Close, append([]byte{0x0f, 0xa1}, "done"...), nil),
	}, nil)

	got := make(chan []byte, 1)
	_, rec, url := startLimitProxy(t, rawUpstream(t, agentFrames, got), HTTPProxyOptions{})
	c, br, resp := rawClient(t, strings.TrimSuffix(url, "/acp"), "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")
	if a := resp.Header.Get("Sec-WebSocket-Accept"); a != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Errorf("accept %q: the client's key did not reach the upstream as sent", a)
	}
	if x := resp.Header.Get("Sec-WebSocket-Extensions"); x != "permessage-deflate; client_max_window_bits" {
		t.Errorf("extensions %q: the offer did not pass unchanged", x)
	}
	for rest := clientFrames; len(rest) > 0; { // in pieces that cut headers and payloads
		n := min(len(rest), 1+len(rest)%4093)
		c.Write(rest[:n])
		rest = rest[n:]
	}
	fromUp := make([]byte, len(agentFrames))
	if _, err := io.ReadFull(br, fromUp); err != nil || !bytes.Equal(fromUp, agentFrames) {
		t.Fatalf("the client received %d bytes (%v), not the %d the agent sent", len(fromUp), err, len(agentFrames))
	}
	c.(*net.TCPConn).CloseWrite()
	if toUp := within(t, got, "the agent's side to end"); !bytes.Equal(toUp, clientFrames) {
		t.Fatalf("the agent received %d bytes, not the %d the client sent", len(toUp), len(clientFrames))
	}
	want := []struct {
		dir   wire.Dir
		body  string
		close string
		flags wire.Flags
	}{
		{wire.DirAgent, `{"jsonrpc":"2.0","method":"hello"}`, "", 0},
		{wire.DirAgent, update, "", 0},
		{wire.DirAgent, update, "", 0},
		{wire.DirAgent, "", "4001 done", 0},
		{wire.DirClient, `{"jsonrpc":"2.0","id":1,"method":"a"}`, "", 0},
		{wire.DirClient, `{"jsonrpc":"2.0","id":2,"method":"b"}`, "", 0},
		{wire.DirClient, `{"jsonrpc":"2.0","id":3,"method":"b"}`, "", 0},
		{wire.DirClient, string(big), "", wire.FlagBinary},
		{wire.DirClient, "", "1000 bye", 0},
	}
	netkit.WaitLong(t, "every message recorded", func() bool { return len(rec.All()) >= len(want)+1 })
	frames := map[wire.Dir][]netkit.Frame{}
	for _, f := range rec.All() {
		if f.Env.Stream == wire.StreamWebSocket {
			frames[f.Dir] = append(frames[f.Dir], f)
		}
	}
	seen := map[wire.Dir]int{}
	for _, w := range want {
		i := seen[w.dir]
		seen[w.dir]++
		if i >= len(frames[w.dir]) {
			t.Fatalf("%v: only %d records", w.dir, i)
		}
		f := frames[w.dir][i]
		if f.Body != w.body || f.Env.Headers["ws-close"] != w.close || f.Flags != w.flags || f.Env.ConnectionID != "raw-1" {
			t.Errorf("%v record %d: %d bytes %q, close %q, flags %v, connection %q; want %d bytes, close %q",
				w.dir, i, len(f.Body), f.Body[:min(len(f.Body), 40)], f.Env.Headers["ws-close"], f.Flags, f.Env.ConnectionID, len(w.body), w.close)
		}
	}
	if n := len(frames[wire.DirAgent]) + len(frames[wire.DirClient]); n != len(want) {
		t.Errorf("%d records, want %d", n, len(want))
	}
}

// fromAgentSplit compresses msg twice with one compressor (the second
// refers back to the first) and returns both payloads.
func fromAgentSplit(msg string) [2][]byte {
	var d deflater
	return [2][]byte{d.compress(msg), d.compress(msg)}
}

// TestWebSocketCompressedPeers: two ends that both speak
// permessage-deflate agree on it through the proxy, and the capture
// holds each message decoded.
func TestWebSocketCompressedPeers(t *testing.T) {
	p, rec, url := startLimitProxy(t, wsEcho(websocket.Upgrader{EnableCompression: true}), HTTPProxyOptions{})
	d := websocket.Dialer{EnableCompression: true}
	c, resp, err := d.Dial("ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if x := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.HasPrefix(x, "permessage-deflate") {
		t.Fatalf("extensions %q: compression was not agreed", x)
	}
	msg := `{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + strings.Repeat("compress me ", 10_000) + `"}}`
	for range 3 {
		c.WriteMessage(websocket.TextMessage, []byte(msg))
		if _, got, err := c.ReadMessage(); err != nil || string(got) != msg {
			t.Fatalf("echo: %d bytes, %v", len(got), err)
		}
	}
	netkit.WaitLong(t, "six messages recorded", func() bool {
		n := 0
		for _, f := range rec.All() {
			if f.Env.Stream == wire.StreamWebSocket && f.Body == msg && f.Flags == 0 {
				n++
			}
		}
		return n == 6
	})
	if n := p.held.msgBufs.Load(); n != 0 {
		t.Errorf("%d pooled message buffers held: a compressed socket's messages go to its recorder for good, in memory of their own", n)
	}
}

// TestWebSocketBytesRefused: a message that crosses the limit in its
// second fragment, or in one frame longer than the relay's buffer, stops
// there: what came before it has gone on, nothing of the frame that
// crosses it does, and each side gets a 1009 close instead. A compressed
// message that cannot be decoded goes on unchanged and is recorded as
// sent, with a warning.
func TestWebSocketBytesRefused(t *testing.T) {
	key := &[4]byte{9, 9, 9, 9}
	first := wsFrame(false, false, wsframe.Text, bytes.Repeat([]byte("a"), 600), key)
	garbled := wsFrame(true, true, wsframe.Text, []byte{0xff, 0xfe, 0xfd}, key)
	for _, tt := range []struct {
		name        string
		send        []byte
		passed      []byte // what reaches the agent before the proxy's close
		refused     bool
		wantWarning string
	}{
		{"second fragment", append(bytes.Clone(first), wsFrame(true, false, wsframe.Continuation, bytes.Repeat([]byte("b"), 600), key)...), first, true, ""},
		{"one long frame", wsFrame(true, false, wsframe.Binary, make([]byte, 200_000), key), nil, true, ""},
		{"undecodable", garbled, garbled, false, "could not be decoded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan []byte, 1)
			warnings := make(chan string, 4)
			_, rec, url := startLimitProxy(t, rawUpstream(t, nil, got), HTTPProxyOptions{MaxMessageSize: limit1K,
				Warn: func(s string) { warnings <- s }})
			c, br, _ := rawClient(t, strings.TrimSuffix(url, "/acp"), "Sec-WebSocket-Extensions: permessage-deflate\r\n")
			c.Write(tt.send)
			var toUp []byte
			if tt.refused {
				h, n, err := wsframe.PeekHeader(br)
				if err != nil || h.Op != wsframe.Close || h.Masked {
					t.Fatalf("the client got %+v %v, want an unmasked close", h, err)
				}
				payload := make([]byte, n+int(h.Len))
				io.ReadFull(br, payload)
				if code, reason := wsframe.ParseClose(payload[n:]); code != websocket.CloseMessageTooBig || !strings.Contains(reason, "--max-message-size") {
					t.Fatalf("close %d %q", code, reason)
				}
				toUp = within(t, got, "the agent's side to end")
				h, n, err = wsframe.ParseHeader(toUp[len(tt.passed):])
				if err != nil || n == 0 || h.Op != wsframe.Close || !h.Masked {
					t.Fatalf("after what passed the agent got %+v %v, want a masked close", h, err)
				}
			} else {
				netkit.WaitLong(t, "the message recorded", func() bool { return len(rec.All()) >= 2 })
				c.(*net.TCPConn).CloseWrite()
				toUp = within(t, got, "the agent's side to end")
				if f := rec.All()[1]; f.Body != "\xff\xfe\xfd" || f.Flags != wire.FlagBinary {
					t.Fatalf("recorded %q flags %v", f.Body, f.Flags)
				}
				if w := within(t, warnings, "a warning"); !strings.Contains(w, tt.wantWarning) {
					t.Fatalf("warned %q", w)
				}
			}
			if !bytes.HasPrefix(toUp, tt.passed) || (!tt.refused && len(toUp) != len(tt.passed)) {
				t.Fatalf("the agent got %d bytes, want %d first", len(toUp), len(tt.passed))
			}
		})
	}
}

// TestRelayLegGathersOnlyToRecord: one leg of the relay passes frames on
// exactly and refuses a fragmented message that crosses the limit, with
// capture on and off; only with it on does it gather and record each
// message.
func TestRelayLegGathersOnlyToRecord(t *testing.T) {
	key := &[4]byte{5, 6, 7, 8}
	under := bytes.Join([][]byte{ // 900 bytes in two fragments, a ping between
		wsFrame(false, false, wsframe.Text, bytes.Repeat([]byte("a"), 600), key),
		wsFrame(true, false, wsframe.Ping, []byte("p"), key),
		wsFrame(true, false, wsframe.Continuation, bytes.Repeat([]byte("b"), 300), key),
	}, nil)
	overFirst := wsFrame(false, false, wsframe.Text, bytes.Repeat([]byte("c"), 600), key)
	in := bytes.Join([][]byte{under, overFirst, wsFrame(true, false, wsframe.Continuation, bytes.Repeat([]byte("d"), 600), key)}, nil)
	for _, tc := range []struct {
		gather  bool
		records int // messages recorded
	}{{true, 1}, {false, 0}} {
		rec := &netkit.Recorder{}
		out, refused, gathered, err := runLeg(in, limit1K, tc.gather, rec)
		passed := append(bytes.Clone(under), overFirst...)
		if !refused || !bytes.Equal(trimClose(t, out), passed) {
			t.Errorf("gather %v: refused %v, %d bytes passed (%v); want refused after %d", tc.gather, refused, len(out), err, len(passed))
		}
		if gathered != tc.gather {
			t.Errorf("gather %v: gathered %v", tc.gather, gathered)
		}
		var messages []string // the closes the refusal records have no body
		for _, f := range rec.All() {
			if f.Body != "" {
				messages = append(messages, f.Body)
			}
		}
		if len(messages) != tc.records || tc.records > 0 && messages[0] != strings.Repeat("a", 600)+strings.Repeat("b", 300) {
			t.Errorf("gather %v: %d messages recorded, want %d", tc.gather, len(messages), tc.records)
		}
	}
}

// TestWebSocketBytesWithoutCapture: through a proxy that records nothing
// (--no-capture), frames pass exactly and a fragmented message that
// crosses the limit is still refused, though no message is gathered.
func TestWebSocketBytesWithoutCapture(t *testing.T) {
	key := &[4]byte{5, 6, 7, 8}
	passed := bytes.Join([][]byte{
		wsFrame(false, false, wsframe.Text, bytes.Repeat([]byte("a"), 600), key),
		wsFrame(true, false, wsframe.Ping, []byte("p"), key),
		wsFrame(true, false, wsframe.Continuation, bytes.Repeat([]byte("b"), 300), key),
		wsFrame(false, false, wsframe.Text, bytes.Repeat([]byte("c"), 600), key),
	}, nil)
	got := make(chan []byte, 1)
	upSrv := netkit.StartServer(t, netkit.H1, rawUpstream(t, nil, got))
	p, err := NewHTTPProxy(HTTPProxyOptions{Upstream: upSrv.URL + "/acp", MaxMessageSize: limit1K})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, br, _ := rawClient(t, netkit.StartServer(t, netkit.H1, p).URL, "Sec-WebSocket-Extensions: permessage-deflate\r\n")
	c.Write(append(bytes.Clone(passed), wsFrame(true, false, wsframe.Continuation, bytes.Repeat([]byte("d"), 600), key)...))
	h, n, err := wsframe.PeekHeader(br)
	if err != nil || h.Op != wsframe.Close || h.Masked {
		t.Fatalf("the client got %+v %v, want an unmasked close", h, err)
	}
	payload := make([]byte, n+int(h.Len))
	io.ReadFull(br, payload)
	if code, _ := wsframe.ParseClose(payload[n:]); code != websocket.CloseMessageTooBig {
		t.Fatalf("close %d, want %d", code, websocket.CloseMessageTooBig)
	}
	toUp := within(t, got, "the agent's side to end")
	if !bytes.HasPrefix(toUp, passed) {
		t.Fatalf("the agent got %d bytes, not the %d the client sent under the limit first", len(toUp), len(passed))
	}
	if h, n, err := wsframe.ParseHeader(toUp[len(passed):]); err != nil || n == 0 || h.Op != wsframe.Close || !h.Masked {
		t.Fatalf("after what passed the agent got %+v %v, want a masked close", h, err)
	}
}

// TestRecordsMessages: the relay gathers messages for every recorder but
// the one capture-off gives it.
func TestRecordsMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  tap.Recorder
		want bool
	}{
		{"capture off", tap.Or(nil), false},
		{"a recorder", &netkit.Recorder{}, true},
		{"a capture", (*capture.Writer)(nil), true},
	} {
		if got := recordsMessages(tc.rec); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
