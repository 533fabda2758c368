package replay

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Tap receives every line a replay sends or receives, with its time, so
// the replay can be captured like any other run. It must not block.
type Tap func(dir wire.Dir, t int64, line []byte)

// peer is the live side of a replay: lines read from it arrive on in,
// lines written go out through write.
type peer struct {
	in      chan protocol.Msg // closed when the peer's output ends
	stop    chan struct{}     // closed by the driver when it is done
	out     io.Writer
	outMu   sync.Mutex
	dir     wire.Dir // the direction of what the peer sends
	tap     Tap
	readErr error // set before in closes
	live    []protocol.Msg
}

// newPeer starts the reader goroutine ("replay reader"): it reads lines
// from r until EOF or a read error, or until close is called and it next
// has a line to deliver. A reader blocked in Read ends when r is closed.
func newPeer(r io.Reader, w io.Writer, dir wire.Dir, tap Tap) *peer {
	p := &peer{in: make(chan protocol.Msg, 64), stop: make(chan struct{}), out: w, dir: dir, tap: tap}
	go p.read(r)
	return p
}

func (p *peer) read(r io.Reader) {
	defer close(p.in)
	br := bufio.NewReaderSize(r, 64<<10)
	var seq uint64
	for {
		line, err := br.ReadBytes('\n') // no line cap: agents send 10+ MiB lines
		if len(line) > 0 {
			now := time.Now().UnixNano()
			body := bytes.TrimSuffix(line, []byte("\n"))
			if p.tap != nil {
				p.tap(p.dir, now, line)
			}
			for _, m := range Split(0, now, p.dir, bytes.TrimSuffix(body, []byte("\r"))) {
				seq++
				m.Seq = seq
				select {
				case p.in <- m:
				case <-p.stop:
					return
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
				p.readErr = err
			}
			return
		}
	}
}

// close tells the reader that nobody takes its lines any more.
func (p *peer) close() { close(p.stop) }

// send writes one message as a line.
func (p *peer) send(body []byte) error {
	line := make([]byte, 0, len(body)+1)
	line = append(append(line, body...), '\n')
	p.outMu.Lock()
	defer p.outMu.Unlock()
	if p.tap != nil {
		p.tap(p.dir.Reverse(), time.Now().UnixNano(), line)
	}
	if _, err := p.out.Write(line); err != nil {
		return fmt.Errorf("writing to the peer: %w: %w", errInputGone, err)
	}
	return nil
}

// errInputGone is wrapped by send's errors: the peer no longer reads
// what we write (it exited, or closed its input).
var errInputGone = errors.New("the peer's input is closed")

// errorResponse builds a JSON-RPC error answering id.
func errorResponse(id []byte, code int, msg string) []byte {
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, quote(msg)))
}
