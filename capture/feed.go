package capture

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The live feed: a running writer serves its capture on a unix socket in
// a private directory (sockpath.go says where). A client writes one JSON line {"from":N}; the server
// answers with a line {"meta":{…},"last":L}, then every record from seq N
// on as a JSONL line (AppendJSONL, body included): first the backlog,
// then each record as soon as it is committed. A {"meta":…} line repeats
// whenever the metadata changes; {"end":true} ends a finished capture and
// {"error":"…"} a feed cut short.
//
// Each subscriber's goroutine reads the records it sends from the file
// itself, in short read transactions, so subscribers hold no memory of
// the writer's and the committer only publishes the highest committed
// seq. A subscriber whose socket stays blocked for feedWriteTimeout is
// cut off; nothing a subscriber does can slow the writer.

// Feed tunables, variables so tests can shorten them.
var (
	feedWriteTimeout = 5 * time.Second
	feedCloseWait    = 2 * time.Second
)

// feedRequest is the client's opening line.
type feedRequest struct {
	From uint64 `json:"from"`
}

// feedControl is every line that is not a record.
type feedControl struct {
	Meta  *Meta   `json:"meta,omitempty"`
	Last  *uint64 `json:"last,omitempty"`
	End   bool    `json:"end,omitempty"`
	Error string  `json:"error,omitempty"`
}

// feedServer is the writer's side of the feed. Its goroutines: the
// accept loop (stopped by closing the listener) and one per subscriber
// (stopped by the end of the capture or by closing its connection).
type feedServer struct {
	w    *Writer
	sock string
	ln   net.Listener

	last    atomic.Uint64 // highest committed seq
	metaGen atomic.Uint64 // bumped when stored metadata changes
	ended   atomic.Bool

	mu    sync.Mutex
	wake  chan struct{} // closed and replaced on every change
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startFeed(w *Writer) (*feedServer, error) {
	ln, sock, err := listenFeed(w.path, w.opts.Warn)
	if err != nil {
		return nil, err
	}
	f := &feedServer{w: w, sock: sock, ln: ln, wake: make(chan struct{}), conns: make(map[net.Conn]struct{})}
	f.wg.Add(1)
	go f.accept()
	return f, nil
}

// advance publishes the highest committed seq (the committer calls it).
func (f *feedServer) advance(last uint64) {
	if last > f.last.Load() {
		f.last.Store(last)
	}
	f.notify()
}

func (f *feedServer) notify() {
	f.mu.Lock()
	close(f.wake)
	f.wake = make(chan struct{})
	f.mu.Unlock()
}

func (f *feedServer) waiter() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wake
}

// close ends the feed after the last commit: subscribers send what they
// have not yet sent and {"end":true}; those still busy after
// feedCloseWait are cut off.
func (f *feedServer) close() {
	f.ended.Store(true)
	f.notify()
	f.ln.Close()
	os.Remove(f.sock)
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(feedCloseWait):
	}
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	<-done
}

// accept is the accept loop goroutine.
func (f *feedServer) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns[c] = struct{}{}
		f.wg.Add(1)
		f.mu.Unlock()
		go f.serve(c)
	}
}

// serve is one subscriber's goroutine.
func (f *feedServer) serve(c net.Conn) {
	defer f.wg.Done()
	defer func() {
		f.mu.Lock()
		delete(f.conns, c)
		f.mu.Unlock()
		c.Close()
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReaderSize(c, 512).ReadSlice('\n')
	var req feedRequest
	if err != nil || json.Unmarshal(line, &req) != nil {
		writeControl(c, feedControl{Error: `bad request: send {"from":N} and a newline`})
		return
	}
	c.SetReadDeadline(time.Time{})
	gone := make(chan struct{})
	go func() { // notices the client hanging up; ends when c is closed
		io.Copy(io.Discard, c)
		close(gone)
	}()
	sub := &subscriber{f: f, c: c, gone: gone, sent: max(req.From, 1) - 1}
	if err := sub.run(); err != nil {
		writeControl(c, feedControl{Error: err.Error()})
	}
}

var errTooSlow = errors.New("subscriber too slow")

// subscriber sends one client the records it asked for.
type subscriber struct {
	f       *feedServer
	c       net.Conn
	gone    <-chan struct{}
	sent    uint64
	metaGen uint64
	buf     []byte
}

func (s *subscriber) run() error {
	if err := s.sendMeta(); err != nil {
		return err
	}
	for {
		wake := s.f.waiter()
		ended := s.f.ended.Load()
		if gen := s.f.metaGen.Load(); gen != s.metaGen {
			if err := s.sendMeta(); err != nil {
				return err
			}
		}
		if last := s.f.last.Load(); last > s.sent {
			if err := s.sendUpTo(last); err != nil {
				return err
			}
			continue
		}
		if ended {
			return s.write(append(s.buf[:0], "{\"end\":true}\n"...))
		}
		select {
		case <-wake:
		case <-s.gone:
			return nil
		}
	}
}

func (s *subscriber) sendMeta() error {
	s.metaGen = s.f.metaGen.Load()
	m := s.f.w.Meta()
	last := s.f.last.Load()
	b, _ := json.Marshal(feedControl{Meta: &m, Last: &last})
	return s.write(append(b, '\n'))
}

// sendUpTo sends the committed records after s.sent up to last, one
// segment per read transaction.
func (s *subscriber) sendUpTo(last uint64) error {
	for s.sent < last {
		s.buf = s.buf[:0]
		next := s.sent + 1
		err := s.f.w.db.View(func(tx *bolt.Tx) error {
			seg, err := findSegment(tx, next, true)
			if err != nil || seg == nil {
				return err
			}
			all, _ := segmentBodies(tx, seg.first)
			end := min(seg.first+uint64(len(seg.recs))-1, last)
			for seq := max(next, seg.first); seq <= end; seq++ {
				rec := seg.recs[seq-seg.first]
				i := seq - seg.first
				if int64(len(all)) == seg.offsets[len(seg.offsets)-1] {
					rec.Body = all[seg.offsets[i]:seg.offsets[i+1]]
				}
				s.buf = append(AppendJSONL(s.buf, &rec), '\n')
			}
			next = end + 1
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading the capture: %v", err)
		}
		if next == s.sent+1 { // nothing there: a hole left by a failed commit
			next = last + 1
		}
		s.sent = next - 1
		if err := s.write(s.buf); err != nil {
			return err
		}
	}
	return nil
}

// write sends b, cutting the subscriber off if its socket stays full.
func (s *subscriber) write(b []byte) error {
	s.c.SetWriteDeadline(time.Now().Add(feedWriteTimeout))
	if _, err := s.c.Write(b); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errTooSlow
		}
		return err
	}
	return nil
}

// writeControl tries to tell a client something, without waiting long.
func writeControl(c net.Conn, ctl feedControl) {
	b, _ := json.Marshal(ctl)
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(append(b, '\n'))
}
