package bridge

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/acphttp"
	"github.com/acpscope/acpscope/internal/testkit"
	"github.com/acpscope/acpscope/internal/testkit/netkit"
	"github.com/acpscope/acpscope/wire"
)

// sseEvent is one event as a test client saw it.
type sseEvent struct {
	id   uint64
	data string
}

// openEvents opens a GET stream and returns its events (comments left
// out); the channel closes when the stream ends.
func (f *serveFixture) openEvents(t *testing.T, connID, sessionID string) <-chan sseEvent {
	t.Helper()
	hv := []string{"Accept", "text/event-stream", acphttp.HeaderConnectionID, connID}
	if sessionID != "" {
		hv = append(hv, acphttp.HeaderSessionID, sessionID)
	}
	resp := f.do(t, "GET", "", hv...)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream %s/%s: %d %s", connID, sessionID, resp.StatusCode, netkit.ReadAll(t, resp.Body))
	}
	events := make(chan sseEvent, 64)
	go func() { // reader: ends when the stream ends
		defer close(events)
		var d wire.SSEDecoder
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			d.Push(buf[:n], func(e *wire.SSEEvent) {
				if !e.Comment {
					id, _ := strconv.ParseUint(e.ID, 10, 64)
					events <- sseEvent{id, string(e.Data)}
				}
			})
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return events
}

// nextEvent waits for the stream's next event.
func nextEvent(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(netkit.CondWait):
		t.Fatalf("no event within %v", netkit.CondWait)
	}
	return sseEvent{}
}

// streamEnds waits for the stream to end and returns what came first.
func streamEnds(t *testing.T, events <-chan sseEvent) []sseEvent {
	t.Helper()
	var got []sseEvent
	timeout := time.After(netkit.CondWait)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return got
			}
			got = append(got, e)
		case <-timeout:
			t.Fatalf("the stream did not end within %v; events so far %v", netkit.CondWait, got)
		}
	}
}

func loadBody(id int, sessionID, cwd string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"session/load","params":{"sessionId":"` + sessionID + `","cwd":"` + cwd + `","mcpServers":[]}}`
}

// awaitedCount returns how many sessions of the one connection wait to
// be confirmed, and how many streams its order gate still follows.
func awaitedCount(f *serveFixture) (awaited, gated int) {
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	for _, c := range f.srv.conns {
		c.mu.Lock()
		awaited += len(c.awaited)
		c.mu.Unlock()
		c.gate.mu.Lock()
		gated += len(c.gate.streams)
		c.gate.mu.Unlock()
	}
	return awaited, gated
}

// TestServeSessionStreamBeforeLoad follows the RFD's resume flow on a
// new connection: the session's stream is opened before session/load
// names the session, receives the replayed history, and the load's
// answer on the connection stream comes after it in the event order. A
// failed load ends the stream it opened, after its error answer; a
// stream nothing names ends when its wait runs out; and only so many
// may wait at once.
func TestServeSessionStreamBeforeLoad(t *testing.T) {
	var warnings testkit.Buffer
	f := startServe(t, netkit.H1, func(o *ServeOptions) {
		o.Argv = []string{demoAgent(t)}
		o.SessionWait = 300 * time.Millisecond
		o.Stderr = &warnings
	})
	conn := f.initialize(t)
	hv := []string{"Content-Type", netkit.CTJSON, acphttp.HeaderConnectionID, conn}
	connEvents := f.openEvents(t, conn, "")

	t.Run("load", func(t *testing.T) {
		sess := f.openEvents(t, conn, "sess_old")
		resp := f.do(t, "POST", loadBody(1, "sess_old", "/w"), append(hv, acphttp.HeaderSessionID, "sess_old")...)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("session/load: %d %s", resp.StatusCode, netkit.ReadAll(t, resp.Body))
		}
		answer := nextEvent(t, connEvents)
		if answer.data != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Fatalf("connection stream: %q, want the load's answer", answer.data)
		}
		for i := 0; i < 2; i++ {
			e := nextEvent(t, sess)
			if !strings.Contains(e.data, `"sessionUpdate"`) || e.id >= answer.id {
				t.Fatalf("history event %d: id %d %q; want a session/update numbered before the answer (%d)", i, e.id, e.data, answer.id)
			}
		}
		if a, _ := awaitedCount(f); a != 0 {
			t.Errorf("%d sessions still wait after a successful load", a)
		}
	})

	t.Run("failed load", func(t *testing.T) {
		sess := f.openEvents(t, conn, "sess_bad")
		resp := f.do(t, "POST", loadBody(2, "sess_bad", "relative"), append(hv, acphttp.HeaderSessionID, "sess_bad")...)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("session/load: %d", resp.StatusCode)
		}
		if e := nextEvent(t, connEvents); !strings.Contains(e.data, `"id":2,"error"`) {
			t.Fatalf("connection stream: %q, want the load's error", e.data)
		}
		if got := streamEnds(t, sess); len(got) != 0 {
			t.Errorf("the failed session's stream carried %v", got)
		}
		netkit.WaitLong(t, "the failed session forgotten", func() bool { a, _ := awaitedCount(f); return a == 0 })
	})

	t.Run("nothing names it", func(t *testing.T) {
		_, gatedBefore := awaitedCount(f)
		sess := f.openEvents(t, conn, "sess_never")
		if got := streamEnds(t, sess); len(got) != 0 {
			t.Errorf("the unnamed session's stream carried %v", got)
		}
		netkit.WaitLong(t, "the unnamed session forgotten", func() bool {
			a, gated := awaitedCount(f)
			return a == 0 && gated <= gatedBefore
		})
		netkit.WaitLong(t, "a warning", func() bool { return strings.Contains(warnings.String(), "session sess_never") })
	})

	t.Run("too many waiting", func(t *testing.T) {
		f := startServe(t, netkit.H2C, func(o *ServeOptions) { o.Argv = []string{demoAgent(t)} })
		conn := f.initialize(t)
		for i := 0; i < maxAwaitedSessions; i++ {
			f.openEvents(t, conn, "sess_wait_"+strconv.Itoa(i))
		}
		resp := f.do(t, "GET", "", "Accept", "text/event-stream", acphttp.HeaderConnectionID, conn, acphttp.HeaderSessionID, "sess_one_more")
		if body := netkit.ReadAll(t, resp.Body); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET beyond %d waiting streams: %d %q, want 404", maxAwaitedSessions, resp.StatusCode, body)
		}
	})
}
