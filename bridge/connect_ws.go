package bridge

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/tap"
	"github.com/acpscope/acpscope/wire"
	"github.com/gorilla/websocket"
)

// connectConn is the connection number connect records under: it has
// exactly one.
const connectConn = 1

// wsLink is connect over one WebSocket: each stdin line is one text
// message, each text message one stdout line. Binary messages are
// recorded and ignored.
type wsLink struct {
	*connector
	ws      *websocket.Conn
	env     func(stream string, status int, h http.Header) *wire.Envelope
	pending *pendingIDs

	watch *acphttp.PeerWatch // the socket's reads and writes go through it

	writeMu    sync.Mutex  // one message at a time on the socket
	closing    atomic.Bool // close has begun: the socket's end is expected
	readerDone chan struct{}
}

// dialWS opens the WebSocket and starts its reader.
func (b *connector) dialWS(ctx context.Context) (*wsLink, error) {
	d := websocket.Dialer{Jar: b.jar, TLSClientConfig: acphttp.TLSClientConfig(b.opts.UnsafeInsecure), HandshakeTimeout: 30 * time.Second,
		ReadBufferSize: acphttp.WSBufferSize, WriteBufferSize: acphttp.WSBufferSize, WriteBufferPool: acphttp.WSWriteBuffers}
	h := http.Header{}
	b.authHeader(h)
	ws, resp, err := d.DialContext(ctx, b.url.String(), h)
	if err != nil {
		return nil, b.dialError(resp, err)
	}
	connID := resp.Header.Get(acphttp.HeaderConnectionID)
	env := func(stream string, status int, hh http.Header) *wire.Envelope {
		e := &wire.Envelope{Method: http.MethodGet, Path: b.url.Path, Proto: resp.Proto, Status: status, Stream: stream, ConnectionID: connID}
		if hh != nil {
			e.Headers = acphttp.EnvelopeHeaders(hh)
		}
		return e
	}
	b.rec.Frame(connectConn, wire.DirAgent, tap.Now(), nil, 0, env(wire.StreamHTTPControl, resp.StatusCode, resp.Header))
	w := &wsLink{connector: b, ws: ws, env: env, pending: &pendingIDs{ids: map[string]bool{}}, readerDone: make(chan struct{})}
	w.watch = acphttp.WatchPeer(ws, cmp.Or(b.opts.KeepAlive, DefaultKeepAlive), w.readerDone)
	go w.read() // reader: ends when the socket closes
	return w, nil
}

// read delivers each text message to the editor until the socket closes.
func (w *wsLink) read() {
	defer close(w.readerDone)
	for {
		mt, msg, err := w.watch.ReadMessage(math.MaxInt64) // like stdio, no size limit
		if acphttp.Gone(err) {
			err = fmt.Errorf("the server sent %s", w.watch.GoneReason())
		}
		if err != nil {
			if !w.closing.Load() {
				w.fail(lostf("the WebSocket to %s ended: %v", w.url, err))
			}
			return
		}
		if mt == websocket.BinaryMessage {
			w.rec.Frame(connectConn, wire.DirAgent, tap.Now(), msg, wire.FlagBinary, w.env(wire.StreamWebSocket, 0, nil))
			continue
		}
		// Recorded before the editor sees it, so its answer is
		// never recorded first.
		w.rec.Frame(connectConn, wire.DirAgent, tap.Now(), msg, 0, w.env(wire.StreamWebSocket, 0, nil))
		w.pending.answered(msg)
		if err := w.fromServer(msg); err != nil {
			w.fail(err)
			return
		}
	}
}

// send writes one editor message as a text message.
func (w *wsLink) send(line []byte) error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	w.rec.Frame(connectConn, wire.DirClient, tap.Now(), line, 0, w.env(wire.StreamWebSocket, 0, nil))
	w.pending.sent(line)
	if err := w.watch.WriteMessage(websocket.TextMessage, line); err != nil {
		return lostf("writing to the WebSocket: %v", err)
	}
	return nil
}

// close sends the close frame, after, when clean, letting the answers
// to the editor's last requests arrive (as they would over HTTP) for a
// while, and waits a moment for the reader to see the server's close.
func (w *wsLink) close(clean bool) {
	if clean {
		w.pending.wait(wsDrainWait, w.readerDone)
	}
	w.closing.Store(true)
	w.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(acphttp.WSControlWait))
	select {
	case <-w.readerDone:
	case <-time.After(2 * time.Second):
	}
	w.ws.Close()
}

// dialError says why a connection could not be made, with the server's
// own words when it answered.
func (b *connector) dialError(resp *http.Response, err error) error {
	if resp == nil {
		return unreachable(b.url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 400 {
		return connectError(b.url.String() + ": the server answered " + resp.Status + " instead of accepting a WebSocket; try the http:// URL")
	}
	return refusedAtStart(b.url, resp.StatusCode, strings.TrimSpace(string(body)))
}

// wsDrainWait bounds how long connect waits, after the editor closed
// stdin, for answers to requests it already sent.
const wsDrainWait = 5 * time.Second

// pendingIDs tracks the editor's requests still unanswered.
type pendingIDs struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (p *pendingIDs) sent(line []byte) {
	if m := wire.Classify(line); m.Kind == wire.KindRequest {
		p.mu.Lock()
		p.ids[string(m.ID)] = true
		p.mu.Unlock()
	}
}

func (p *pendingIDs) answered(msg []byte) {
	if m := wire.Classify(msg); m.Kind == wire.KindResponse || m.Kind == wire.KindError {
		p.mu.Lock()
		delete(p.ids, string(m.ID))
		p.mu.Unlock()
	}
}

func (p *pendingIDs) empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids) == 0
}

// wait returns when every request is answered, after max, or when the
// socket's reader has ended.
func (p *pendingIDs) wait(max time.Duration, readerDone <-chan struct{}) {
	deadline := time.Now().Add(max)
	for !p.empty() && time.Now().Before(deadline) {
		select {
		case <-readerDone:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
