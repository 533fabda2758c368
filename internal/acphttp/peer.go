package acphttp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gorilla/websocket"
)

// PeerWatch finds a WebSocket peer that is gone without a word: a host
// that vanished (no FIN reaches us), a peer that hung and reads nothing
// more, or one that stopped reading what we send. TCP keep-alive finds
// the first after minutes and never the others, and each holds its
// connection, and on serve its agent, for good. The watch pings every
// interval; a read waiting for PeerMissedPings intervals with neither a
// pong nor a byte of a message fails, and so does a write the peer takes
// longer than that per 64 KiB to accept (WriteDeadline). The caller then
// lets the connection go.
//
// A read that waits is the only one judged: while the caller is busy
// elsewhere (a slow agent not reading its stdin) nothing counts against
// the peer, and a huge message arriving slowly stays alive with its bytes.
//
// A watch made with a non-positive interval watches nothing: its reads
// and writes are the socket's own.
type PeerWatch struct {
	ws       *websocket.Conn
	interval time.Duration
}

// PeerMissedPings is how many ping intervals a peer may stay silent, or
// take per 64 KiB written to it, before it counts as gone.
const PeerMissedPings = 3

// WatchPeer starts pinging ws every interval until done is closed or a
// ping cannot be sent; ws's reads and data writes must then go through
// the watch. Control frames may be written beside any other write.
func WatchPeer(ws *websocket.Conn, interval time.Duration, done <-chan struct{}) *PeerWatch {
	p := &PeerWatch{ws: ws, interval: interval}
	if interval <= 0 {
		return p
	}
	ws.SetPongHandler(func(string) error { p.alive(); return nil })
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(WSControlWait)) != nil {
					return
				}
			}
		}
	}()
	return p
}

func (p *PeerWatch) alive() {
	_ = p.ws.SetReadDeadline(time.Now().Add(PeerMissedPings * p.interval))
}

// ReadMessage is acphttp.ReadMessage under the watch. A peer that stayed
// silent fails it with an error for which Gone reports true.
func (p *PeerWatch) ReadMessage(limit int64) (int, []byte, error) {
	if p.interval <= 0 {
		return ReadMessage(p.ws, limit)
	}
	p.alive()
	mt, r, err := p.ws.NextReader()
	if err != nil {
		return mt, nil, err
	}
	b, err := readUpTo(progress{r, p.alive}, limit)
	return mt, b, err
}

// WriteMessage writes one data message under the watch.
func (p *PeerWatch) WriteMessage(mt int, msg []byte) error {
	if p.interval > 0 {
		_ = p.ws.SetWriteDeadline(WriteDeadline(len(msg), p.interval))
	}
	return p.ws.WriteMessage(mt, msg)
}

// Gone reports whether err is a watched read's or write's timeout.
func Gone(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// GoneReason is the reason of the close that lets a silent peer go.
func (p *PeerWatch) GoneReason() string {
	return fmt.Sprintf("no answer to pings for %v", PeerMissedPings*p.interval)
}

// WriteDeadline is when a write of n bytes to a peer kept alive every
// interval must be done: PeerMissedPings intervals for each 64 KiB begun.
// A peer that stopped reading fills the socket's buffers and then blocks
// the write for good, and behind it whatever feeds the stream; at this
// pace a slow link is never cut (with 15 s intervals a 100 MB message
// may take over a day), a hung peer is.
func WriteDeadline(n int, interval time.Duration) time.Time {
	return time.Now().Add(PeerMissedPings * interval * time.Duration(1+n/(64<<10)))
}

// progress calls alive whenever a read brings bytes.
type progress struct {
	r     io.Reader
	alive func()
}

func (p progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.alive()
	}
	return n, err
}
