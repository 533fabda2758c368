package capture

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// waitLimit bounds every wait for something to happen: generous, since
// the machines the tests run on are shared and busy; a passing wait
// returns as soon as its condition holds.
const waitLimit = 2 * time.Minute

// tempCapture returns a fresh capture path in a test's temp dir and
// registers a cleanup that runs bbolt's consistency check on the file,
// so every database a test writes is checked.
func tempCapture(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.acpscope")
	t.Cleanup(func() { checkDB(t, path) })
	return path
}

// checkDB runs tx.Check on a finished capture, if it exists.
func checkDB(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if err != nil {
		if !fileExists(path) {
			return
		}
		t.Errorf("tx.Check: opening %s: %v", path, err)
		return
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("tx.Check %s: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Errorf("tx.Check %s: %v", path, err)
	}
}

// createTest makes a writer on a checked temp capture, with fsync off
// unless sync is wanted, and closes it at cleanup.
func createTest(t testing.TB, opts WriterOptions) *Writer {
	t.Helper()
	w, err := Create(tempCapture(t), opts)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// warnings collects Warn calls.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (ws *warnings) warn(s string) {
	ws.mu.Lock()
	ws.lines = append(ws.lines, s)
	ws.mu.Unlock()
}

func (ws *warnings) all() []string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return append([]string(nil), ws.lines...)
}

// openTest opens a finished capture and closes it at cleanup.
func openTest(t testing.TB, path string) *Reader {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// readAll returns every record with its body.
func readAll(t testing.TB, r *Reader) []Record {
	t.Helper()
	var out []Record
	err := r.Scan(1, func(rec *Record) bool {
		out = append(out, *rec)
		return true
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	for i := range out {
		body, err := r.Body(out[i].Seq)
		if err != nil {
			t.Fatalf("Body(%d): %v", out[i].Seq, err)
		}
		out[i].Body = body
	}
	return out
}

type boltTx = bolt.Tx

func mustBolt(t testing.TB, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// socketPath returns where the feed of the capture at path is served,
// failing the test when there is no private place for it.
func socketPath(t testing.TB, path string) string {
	t.Helper()
	sock, err := SocketPath(path)
	if err != nil {
		t.Fatal(err)
	}
	return sock
}

// waitUntil polls cond until it holds, and fails the test with state()
// if it does not within waitLimit.
func waitUntil(t testing.TB, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", waitLimit, state())
		}
		time.Sleep(time.Millisecond)
	}
}

// waitForQueueRoom waits until w's queue holds at most half of what the
// tap copies into fresh memory (freshQueueBytes). Past that bound the tap
// copies only into buffers the builder has given back, and drops a chunk
// when none is, so a test that must record everything feeds below it.
func waitForQueueRoom(t testing.TB, w *Writer) {
	t.Helper()
	waitUntil(t, func() bool { return w.Stats().Queued <= freshQueueBytes/2 },
		func() string {
			return fmt.Sprintf("%d bytes still queued, want at most %d", w.Stats().Queued, freshQueueBytes/2)
		})
}

// recordAndBody reads record seq and its body, failing t if it cannot.
func recordAndBody(t testing.TB, r *Reader, seq uint64) (Record, []byte) {
	t.Helper()
	rec, err := r.Record(seq)
	if err != nil {
		t.Fatal(err)
	}
	body, err := r.Body(seq)
	if err != nil {
		t.Fatal(err)
	}
	return rec, body
}

// readOnlyDB opens the capture at path with bbolt itself, to look at its
// layout; it is closed when t ends.
func readOnlyDB(t testing.TB, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// streamBodies reads every record's body back, in order, by the stream
// it came from.
func streamBodies(t testing.TB, r *Reader) map[Stream][][]byte {
	t.Helper()
	got := map[Stream][][]byte{}
	for seq := uint64(1); seq <= r.Last(); seq++ {
		rec, body := recordAndBody(t, r, seq)
		s := recordStream(&rec)
		got[s] = append(got[s], bytes.Clone(body))
	}
	return got
}
