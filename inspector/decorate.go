package inspector

import (
	"fmt"
	"sync"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Decorations are what the message table shows beyond a record's
// metadata: the variant of a session/update and the start of a line that
// is not JSON-RPC. Both live in the record's body, which the UI goroutine
// never reads: a decorator worker reads it and posts the result back, and
// the row shows its plain method until then.

// decoration is what a row shows of its record's body.
type decoration struct {
	update  string // a session/update's sessionUpdate variant
	preview string // the start of a line that is not JSON-RPC
}

// Bounds of the decorator: the cache of computed decorations starts over
// past maxDecorations, and the requests waiting for the worker keep only
// the newest maxWanted (older ones belong to blocks scrolled past).
const (
	maxDecorations = 1 << 16
	maxWanted      = maxBlocks * blockRows
)

// decoWant asks for one record's decoration.
type decoWant struct {
	seq    uint64
	update bool // a session/update: its variant; else a preview
}

// quickDecoration returns the decoration r's metadata alone gives, and
// whether its body must be read for the rest.
func quickDecoration(r *capture.Record) (d decoration, want *decoWant) {
	if exchange, ok := r.HTTP.Exchange(); ok {
		return decoration{preview: exchange}, nil // a status-only HTTP exchange: no message to show
	}
	update := r.Kind == wire.KindNotification && r.Method == "session/update"
	preview := !r.Kind.IsProtocol()
	switch {
	case !update && !preview:
		return decoration{}, nil
	case r.Size > decorateMax:
		// Not worth reading a huge body for one cell; the detail pane
		// reads it when asked.
		if preview {
			d.preview = fmt.Sprintf("(%s line)", human.Size(r.Size))
		}
		return d, nil
	}
	return decoration{}, &decoWant{seq: r.Seq, update: update}
}

// readDecoration reads the body behind w; false when it cannot be read.
func readDecoration(src capture.Source, w decoWant) (decoration, bool) {
	body, err := src.Body(w.seq)
	if err != nil {
		return decoration{}, false
	}
	if w.update {
		m := protocol.Msg{Kind: wire.KindNotification, Method: "session/update", Body: body}
		v, _ := protocol.UpdateOf(&m)
		return decoration{update: v}, true
	}
	if len(body) > previewBytes {
		body = body[:previewBytes]
	}
	return decoration{preview: printable(body)}, true
}

// decorator hands the table's requests to its worker. want may be called
// from the UI goroutine and never blocks.
type decorator struct {
	mu     sync.Mutex
	wanted []decoWant // oldest first
	wake   chan struct{}
}

func newDecorator() *decorator { return &decorator{wake: make(chan struct{}, 1)} }

func (d *decorator) want(ws []decoWant) {
	d.mu.Lock()
	d.wanted = append(d.wanted, ws...)
	if over := len(d.wanted) - maxWanted; over > 0 {
		d.wanted = append(d.wanted[:0:0], d.wanted[over:]...)
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// next takes up to a block of the newest requests: the rows on screen
// now are the last asked for.
func (d *decorator) next() []decoWant {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := min(len(d.wanted), blockRows)
	batch := append([]decoWant(nil), d.wanted[len(d.wanted)-n:]...)
	d.wanted = d.wanted[:len(d.wanted)-n]
	return batch
}

// run is the worker ("row decorator") of a capture view: it reads the
// bodies asked for and posts each batch's decorations to done on the UI
// goroutine, until its job stops.
func (d *decorator) run(j *job, src capture.Source, done func(map[uint64]decoration)) {
	for {
		select {
		case <-d.wake:
		case <-j.stopc:
			return
		case <-j.app.done:
			return
		}
		for batch := d.next(); len(batch) > 0; batch = d.next() {
			out := make(map[uint64]decoration, len(batch))
			for i := len(batch) - 1; i >= 0; i-- {
				if j.stopped() {
					return
				}
				if dec, ok := readDecoration(src, batch[i]); ok {
					out[batch[i].seq] = dec
				}
			}
			if len(out) > 0 {
				j.post(func() { done(out) })
			}
		}
	}
}

// decorateBlock gives a freshly read block the decorations known so far
// and asks for the others.
func (m *rowModel) decorateBlock(blk *rowBlock) {
	var want []decoWant
	for i := range blk.rows {
		ri := &blk.rows[i]
		d, w := quickDecoration(&ri.rec)
		if w != nil {
			if cached, ok := m.deco[w.seq]; ok {
				d = cached
			} else {
				want = append(want, *w)
			}
		}
		ri.update, ri.preview = d.update, d.preview
	}
	if len(want) > 0 && m.askDeco != nil {
		m.askDeco(want)
	}
}

// decorated keeps decorations the worker computed and shows them in the
// blocks that hold their rows. It runs on the UI goroutine.
func (m *rowModel) decorated(ds map[uint64]decoration) {
	if len(m.deco)+len(ds) > maxDecorations {
		m.deco = make(map[uint64]decoration, len(ds))
	}
	for seq, d := range ds {
		m.deco[seq] = d
	}
	for _, blk := range m.blocks {
		for i := range blk.rows {
			if d, ok := ds[blk.rows[i].rec.Seq]; ok {
				blk.rows[i].update, blk.rows[i].preview = d.update, d.preview
			}
		}
	}
}
