package proxy

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/acpscope/acpscope/internal/acphttp"
)

// An event stream's body is relayed by the proxy itself rather than by
// ReverseProxy, which reads into one buffer it reuses and so makes the
// capture copy every event before the client may see it. Here each read
// gets a buffer of its own, and the events whole in it, from
// minLentEvent up, are lent to the capture (tap.Borrower) rather than
// copied; the buffer is reused once the client has it and the capture
// has given back every event. With 16 KiB events the copy was most of
// what capture cost the forwarding goroutine
// (BenchmarkHTTPAgainstMinimal/sse, CPU profile).

// exchangeKey is the request context key under which serveRecorded puts
// the exchange, for takeEvents to find.
type exchangeKey struct{}

// eventReadSize is how much one read of an event stream takes, as much
// as ReverseProxy reads at a time.
const eventReadSize = 32 << 10

// minLentEvent is the smallest event lent rather than copied. A lent
// event holds its whole read buffer until the capture has it, and the
// capture's queue counts only the event: a stream of small events, each
// read on its own, would hold 32 KiB apiece, far past what the queue's
// bounds say. From a quarter of the buffer, what is held is at most four
// times what is counted.
const minLentEvent = eventReadSize / 4

// readChunk is the buffer of one read of an event stream. refs counts
// its holders: the relay until the client has the bytes, and the
// capture once per event lent from it.
type readChunk struct {
	buf  []byte
	refs atomic.Int32
	// abandoned: never back to the pool (see relayEvents).
	abandoned atomic.Bool
	held      *atomic.Int64 // the proxy's count of chunks not let go of
}

var readChunks = sync.Pool{New: func() any { return &readChunk{buf: make([]byte, eventReadSize)} }}

// newReadChunk returns a chunk held by its caller, counted in held.
func newReadChunk(held *atomic.Int64) *readChunk {
	c := readChunks.Get().(*readChunk)
	c.refs.Store(1)
	c.abandoned.Store(false)
	c.held = held
	held.Add(1)
	return c
}

// lend counts one more holder (an event the capture borrows).
func (c *readChunk) lend() *readChunk {
	c.refs.Add(1)
	return c
}

// Return lets go of one holder's claim; the last one makes the buffer
// reusable.
func (c *readChunk) Return() {
	if c.refs.Add(-1) == 0 {
		c.held.Add(-1)
		if !c.abandoned.Load() {
			readChunks.Put(c)
		}
	}
}

// abandon is the relay's Return for a buffer that must never be reused.
func (c *readChunk) abandon() {
	c.abandoned.Store(true)
	c.Return()
}

// takeEvents is ReverseProxy's ModifyResponse: an event stream on our
// endpoint (not compressed) is kept for serveRecorded to relay, and
// ReverseProxy, which still writes the status and headers, gets an empty
// body to copy.
func takeEvents(res *http.Response) error {
	ex, _ := res.Request.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil || isCompressed(res.Header) || !acphttp.IsEventStream(res.Header.Get("Content-Type")) {
		return nil
	}
	ex.events, ex.eventBody, ex.announced = res, res.Body, len(res.Trailer)
	res.Body = http.NoBody
	return nil
}

// relayEvents copies the event stream takeEvents kept to the client, a
// read at a time, tapping each read before it is written and flushing
// after it, as ReverseProxy with FlushInterval -1 does; then its
// trailers. A failed read or write aborts the response as ReverseProxy
// does, with http.ErrAbortHandler.
func (ex *exchange) relayEvents(w http.ResponseWriter, limit int64) {
	res := ex.events
	defer ex.closeEvents()
	rc := http.NewResponseController(w)
	if rc.Flush() != nil { // the status and headers, before any event
		panic(http.ErrAbortHandler)
	}
	for {
		c := newReadChunk(ex.held)
		n, rerr := ex.eventBody.Read(c.buf)
		var werr error
		if n > 0 {
			ex.lent = c
			ex.tap(c.buf[:n], limit)
			ex.lent = nil
			if _, werr = w.Write(c.buf[:n]); werr == nil {
				werr = rc.Flush()
			}
		}
		if werr != nil {
			// Not back to the pool: an HTTP/2 server may return from a
			// failed write while its frame is still being sent from c.
			c.abandon()
			panic(http.ErrAbortHandler)
		}
		c.Return()
		switch {
		case rerr == io.EOF:
			ex.closeEvents()
			forwardTrailers(w, res, ex.announced)
			return
		case rerr != nil:
			panic(http.ErrAbortHandler)
		}
	}
}

// closeEvents closes the kept event stream's body once; an exchange that
// ends before relaying it must not leave the upstream connection held.
func (ex *exchange) closeEvents() {
	if ex.eventBody != nil {
		ex.eventBody.Close()
		ex.eventBody = nil
	}
}

// forwardTrailers passes on the trailers that came after the body, as
// ReverseProxy does: declared ones (announced in the Trailer header the
// client was sent) under their names, any others with
// http.TrailerPrefix.
func forwardTrailers(w http.ResponseWriter, res *http.Response, announced int) {
	if len(res.Trailer) == 0 {
		return
	}
	h := w.Header()
	if len(res.Trailer) == announced {
		for k, vv := range res.Trailer {
			for _, v := range vv {
				h.Add(k, v)
			}
		}
		return
	}
	for k, vv := range res.Trailer {
		for _, v := range vv {
			h.Add(http.TrailerPrefix+k, v)
		}
	}
}

// withExchange is r carrying ex for takeEvents.
func withExchange(r *http.Request, ex *exchange) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex))
}
