package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/acpscope/acpscope/protocol"
)

// Live reads a running proxy's capture through its feed. Records arrive in
// the background; Updates signals when more are available. It keeps every
// record it receives in memory, bodies included, until Discard lets go of
// those a reader is done with.
//
// Its goroutine reads the socket until the feed ends or Close closes it.
type Live struct {
	path    string
	conn    net.Conn
	updates chan struct{}
	done    chan struct{}

	mu       sync.RWMutex
	meta     Meta
	base     uint64   // seq of recs[0]
	recs     []Record // by seq - base; Seq 0 marks a hole
	last     uint64
	err      error
	closed   bool
	ready    chan struct{} // closed when the first meta line arrived
	gotReady bool
	// lastAtOpen is the highest committed seq when the feed answered:
	// the backlog ends there and live records follow.
	lastAtOpen uint64
	// backlog is closed once every record up to lastAtOpen has arrived.
	backlog    chan struct{}
	gotBacklog bool

	// holdLimit, when set, bounds the bytes of records held: the feed is
	// not read further until Discard makes room (room signals it).
	holdLimit, held int64
	room            *sync.Cond
}

// recordCost is what holding a record costs beyond its body.
const recordCost = 128

// liveDialTimeout bounds connecting and the first answer.
var liveDialTimeout = 2 * time.Second

// DialLive connects to the feed of the capture at path, asking for every
// record from seq from on.
func DialLive(path string, from uint64) (*Live, error) {
	c, err := dialFeed(path, liveDialTimeout, false)
	if err != nil {
		return nil, fmt.Errorf("connecting to the live feed of %s: %w (is its proxy still running? `acpscope ls` shows)", path, err)
	}
	l := newLive(path, c, from)
	b, _ := json.Marshal(feedRequest{From: from})
	c.SetWriteDeadline(time.Now().Add(liveDialTimeout))
	if _, err := c.Write(append(b, '\n')); err != nil {
		c.Close()
		return nil, fmt.Errorf("asking the live feed of %s: %w", path, err)
	}
	c.SetWriteDeadline(time.Time{})
	go l.read()
	select {
	case <-l.ready:
		return l, nil
	case <-l.done:
		select {
		case <-l.ready: // it answered, then ended at once: Err says how
			return l, nil
		default:
		}
		if err := l.Err(); err != nil {
			return nil, err // it names the feed
		}
		return nil, fmt.Errorf("live feed of %s ended before it answered", path)
	case <-time.After(liveDialTimeout):
		l.Close()
		return nil, fmt.Errorf("live feed of %s did not answer within %v", path, liveDialTimeout)
	}
}

// newLive makes the Live of a feed connection that was asked for every
// record from seq from on; its goroutine is l.read.
func newLive(path string, c net.Conn, from uint64) *Live {
	return &Live{path: path, conn: c, updates: make(chan struct{}, 1), done: make(chan struct{}),
		ready: make(chan struct{}), backlog: make(chan struct{}), base: max(from, 1)}
}

// read is the Live's goroutine: it parses lines until the feed ends.
func (l *Live) read() {
	defer close(l.done)
	defer close(l.updates)
	br := bufio.NewReaderSize(l.conn, 256<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			l.finish(err)
			return
		}
		if stop := l.handle(line); stop {
			return
		}
		if br.Buffered() == 0 {
			l.signal()
		}
	}
}

// handle takes one line; it reports whether the feed has ended.
func (l *Live) handle(line []byte) bool {
	if bytes.HasPrefix(line, []byte(`{"seq":`)) {
		rec, err := ParseJSONL(line)
		if err != nil {
			l.fail(fmt.Errorf("live feed of %s sent a bad record: %w", l.path, err))
			return true
		}
		if err := l.add(rec); err != nil {
			l.fail(fmt.Errorf("live feed of %s: %w", l.path, err))
			return true
		}
		return false
	}
	var ctl feedControl
	if err := json.Unmarshal(line, &ctl); err != nil {
		l.fail(fmt.Errorf("live feed of %s sent a bad line: %w", l.path, err))
		return true
	}
	switch {
	case ctl.Error != "":
		l.fail(fmt.Errorf("live feed of %s ended: %s", l.path, ctl.Error))
		return true
	case ctl.End:
		l.signal()
		l.conn.Close()
		return true
	case ctl.Meta != nil:
		l.mu.Lock()
		l.meta = *ctl.Meta
		if !l.gotReady {
			if ctl.Last != nil {
				l.lastAtOpen = *ctl.Last
			}
			l.gotReady = true
			close(l.ready)
			l.checkBacklog()
		}
		l.mu.Unlock()
	}
	return false
}

// maxLiveGap bounds the hole one record may open after those held: each
// missing record costs a slot. Holes come from failed commits, each losing
// at most a group (WriterOptions.CommitRecords); a longer one is read from
// the file once the proxy exits.
const maxLiveGap = 1 << 16

// add holds rec.
func (l *Live) add(rec Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rec.Seq < l.base {
		return nil
	}
	l.waitForRoom() // Discard may move l.base meanwhile
	if rec.Seq < l.base {
		return nil
	}
	if len(l.recs) == 0 {
		l.base = rec.Seq // nothing held: what it skipped costs nothing
	}
	i := rec.Seq - l.base
	if i > uint64(len(l.recs))+maxLiveGap {
		return fmt.Errorf("record %d arrived after %d: more than %d records missing between them; read the capture once its proxy exits",
			rec.Seq, l.base+uint64(len(l.recs))-1, maxLiveGap)
	}
	l.held += int64(len(rec.Body)) + recordCost
	for uint64(len(l.recs)) < i {
		l.recs = append(l.recs, Record{}) // a hole: lost by a failed commit
	}
	if uint64(len(l.recs)) == i {
		l.recs = append(l.recs, rec)
	} else {
		l.recs[i] = rec
	}
	l.last = max(l.last, rec.Seq)
	l.checkBacklog()
	if rec.Peer >= l.base && rec.Peer < rec.Seq {
		if req := &l.recs[rec.Peer-l.base]; req.Seq != 0 && req.Peer == 0 {
			req.Peer = rec.Seq
		}
	}
	return nil
}

// waitForRoom blocks the feed's reader while the records held exceed
// the hold limit; l.mu must be held. The reader signals first, so a
// reader of the Live waiting for updates takes and discards what is held.
func (l *Live) waitForRoom() {
	for l.holdLimit > 0 && l.held > l.holdLimit && !l.closed {
		l.signal()
		l.room.Wait()
	}
}

// SetHoldLimit makes the Live stop reading its feed while the records it
// holds exceed limit bytes, until Discard lets go of some: the proxy then
// waits for this subscriber (up to its write timeout) instead of the
// subscriber's memory growing. For readers that discard as they go.
func (l *Live) SetHoldLimit(limit int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holdLimit = limit
	if l.room == nil {
		l.room = sync.NewCond(&l.mu)
	}
}

// checkBacklog closes l.backlog once the backlog has arrived; l.mu must
// be held. The feed sends records in order, so the last one arriving
// means all before it have.
func (l *Live) checkBacklog() {
	if l.gotReady && !l.gotBacklog && (l.last >= l.lastAtOpen || l.base > l.lastAtOpen) {
		l.gotBacklog = true
		close(l.backlog)
	}
}

func (l *Live) signal() {
	select {
	case l.updates <- struct{}{}:
	default:
	}
}

// finish records why reading stopped.
func (l *Live) finish(err error) {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the proxy closed its feed without finishing (did it crash?)")
	}
	l.fail(fmt.Errorf("live feed of %s: %w", l.path, err))
}

func (l *Live) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
	l.conn.Close()
}

// Updates returns a channel that receives a value whenever new records
// arrive, and is closed when the proxy finishes or the feed is cut.
func (l *Live) Updates() <-chan struct{} { return l.updates }

// Err reports why the feed ended, nil while it runs or after a clean end.
func (l *Live) Err() error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.err
}

// Done is closed when the feed has ended and every record has arrived.
func (l *Live) Done() <-chan struct{} { return l.done }

// Meta returns the capture's metadata as the feed last sent it.
func (l *Live) Meta() Meta {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.meta
}

// LastAtOpen returns the highest sequence number the capture held when
// the feed answered, before the backlog has necessarily arrived: where
// "the last N records" end.
func (l *Live) LastAtOpen() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.lastAtOpen
}

// Last returns the highest sequence number received (0 if none).
func (l *Live) Last() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.last
}

// get returns the record seq; l.mu must be held.
func (l *Live) get(seq uint64) (*Record, error) {
	if seq < l.base || seq-l.base >= uint64(len(l.recs)) || l.recs[seq-l.base].Seq == 0 {
		return nil, fmt.Errorf("record %d of %s: %w", seq, l.path, ErrNoRecord)
	}
	return &l.recs[seq-l.base], nil
}

// Path returns the capture file's path.
func (l *Live) Path() string { return l.path }

// Discard lets go of the records before seq: a reader that takes each
// record once, as tail does, keeps its memory flat however long the
// proxy runs. Record and Body then report them missing.
func (l *Live) Discard(before uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if before <= l.base {
		return
	}
	n := min(before-l.base, uint64(len(l.recs)))
	for i := range l.recs[:n] {
		if l.recs[i].Seq != 0 {
			l.held -= int64(len(l.recs[i].Body)) + recordCost
		}
	}
	clear(l.recs[:n]) // the bodies go now; the slots when the slice next grows
	l.recs = l.recs[n:]
	l.base += n
	if l.room != nil {
		l.room.Broadcast()
	}
}

// Record returns the metadata of one record, without its body.
func (l *Live) Record(seq uint64) (Record, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r, err := l.get(seq)
	if err != nil {
		return Record{}, err
	}
	return withoutBody(r), nil
}

func withoutBody(r *Record) Record {
	out := *r
	out.Body = nil
	out.ID = bytes.Clone(r.ID)
	if r.HTTP != nil {
		env := *r.HTTP
		out.HTTP = &env
	}
	return out
}

// Body returns a copy of the record's exact bytes.
func (l *Live) Body(seq uint64) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r, err := l.get(seq)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(r.Body), nil
}

// Scan calls fn with each record received from seq on, in order, without
// bodies, until fn returns false or the records end. fn may call l.
func (l *Live) Scan(from uint64, fn func(*Record) bool) error {
	for {
		l.mu.RLock()
		from = max(from, l.base) // Discard and add move it
		var batch []Record
		for seq := from; seq-l.base < uint64(len(l.recs)) && len(batch) < 256; seq++ {
			if r := &l.recs[seq-l.base]; r.Seq != 0 {
				batch = append(batch, withoutBody(r))
			}
			from = seq + 1
		}
		l.mu.RUnlock()
		if len(batch) == 0 {
			return nil
		}
		for i := range batch {
			if !fn(&batch[i]) {
				return nil
			}
		}
	}
}

// Findings returns nil: lint runs on finished captures.
func (l *Live) Findings() ([]protocol.Finding, error) { return nil, nil }

// Close stops following the feed. It is idempotent.
func (l *Live) Close() error {
	l.mu.Lock()
	l.closed = true
	if l.room != nil {
		l.room.Broadcast()
	}
	l.mu.Unlock()
	l.conn.Close()
	<-l.done
	return nil
}

// BacklogStall is how long WaitBacklog waits for the next record of the
// backlog before it gives up: a long backlog may take a while, but one
// that stops arriving means the proxy is stuck.
var BacklogStall = 10 * time.Second

// WaitBacklog blocks until every record the capture held when the feed
// answered (up to LastAtOpen) has arrived, so a reader sees at least the
// capture as it stood when it was opened. It fails when the feed ends
// with an error first, or when no record arrives for stall.
func (l *Live) WaitBacklog(stall time.Duration) error {
	timer := time.NewTimer(stall)
	defer timer.Stop()
	seen := l.Last()
	for {
		select {
		case <-l.backlog:
			return nil
		case <-l.done:
			select {
			case <-l.backlog:
				return nil
			default:
			}
			if err := l.Err(); err != nil {
				return fmt.Errorf("%w (%d of its %d records arrived)", err, l.Last(), l.LastAtOpen())
			}
			return nil // closed cleanly: the feed sent all there was
		case <-timer.C:
			now := l.Last()
			if now == seen {
				return fmt.Errorf("live feed of %s: got records up to %d of the %d it held, then nothing for %v; its proxy may be stuck: try again, or follow it with `acpscope tail`",
					l.path, now, l.LastAtOpen(), stall)
			}
			seen = now
			timer.Reset(stall)
		}
	}
}

// OpenComplete opens a capture for reading it through once, as dump,
// show and lint do: like OpenSource, but a live capture is returned only
// after its backlog has arrived, so it holds at least every record the
// capture held when it was opened.
func OpenComplete(path string) (Source, error) {
	src, err := OpenSource(path)
	if err != nil {
		return nil, err
	}
	if l, ok := src.(*Live); ok {
		if err := l.WaitBacklog(BacklogStall); err != nil {
			l.Close()
			return nil, err
		}
	}
	return src, nil
}

// OpenSource opens a capture for viewing: directly when finished, through
// its feed when a proxy is writing it.
func OpenSource(path string) (Source, error) {
	r, err := Open(path)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, ErrLive) {
		return nil, err
	}
	l, lerr := DialLive(path, 1)
	if lerr != nil {
		return nil, fmt.Errorf("%w; its feed did not answer either: %v", err, lerr)
	}
	return l, nil
}

// peekLive asks a capture's feed for its metadata, cheaply: it reports
// false when no proxy serves the capture (and removes stale sockets).
func peekLive(path string) (Meta, uint64, bool) {
	c, err := dialFeed(path, 200*time.Millisecond, true)
	if err != nil {
		return Meta{}, 0, false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("{\"from\":18446744073709551615}\n")); err != nil {
		return Meta{}, 0, false
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	var ctl feedControl
	if err != nil || json.Unmarshal(line, &ctl) != nil || ctl.Meta == nil {
		return Meta{}, 0, false
	}
	var last uint64
	if ctl.Last != nil {
		last = *ctl.Last
	}
	return *ctl.Meta, last, true
}
