package capture

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/wire"
)

// recordingWatcher keeps what it is handed; block, when set, holds every
// Record call until it is closed.
type recordingWatcher struct {
	mu       sync.Mutex
	recs     []Record
	finished int
	skipped  uint64
	block    chan struct{}
	notes    map[string]string
}

func (rw *recordingWatcher) Record(rec *Record) {
	if rw.block != nil {
		<-rw.block
	}
	r := *rec
	r.Body = append([]byte(nil), rec.Body...)
	rw.mu.Lock()
	rw.recs = append(rw.recs, r)
	rw.mu.Unlock()
}

func (rw *recordingWatcher) Finish(skipped uint64) map[string]string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.finished++
	rw.skipped = skipped
	return rw.notes
}

func (rw *recordingWatcher) count() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return len(rw.recs)
}

func TestWatchDeliversEveryRecordThenFinishes(t *testing.T) {
	tests := []struct {
		name    string
		records int
		late    bool // Watch after the first commits
	}{
		{"empty capture", 0, false},
		{"a few", 5, false},
		{"several segments", 700, false},
		{"watch started late reads the backlog", 300, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tempCapture(t)
			w, err := Create(path, WriterOptions{NoSync: true, NoFeed: true, CommitEvery: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rw := &recordingWatcher{notes: map[string]string{"otlp.spans": "42"}}
			if !tc.late {
				w.Watch(rw)
			}
			for i := range tc.records {
				w.Frame(0, wire.DirClient, int64(i+1), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"m"}`, i), 0, nil)
			}
			if tc.late {
				deadline := time.Now().Add(waitLimit)
				for w.Stats().Committed < uint64(tc.records) && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				w.Watch(rw)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if rw.finished != 1 || rw.skipped != 0 {
				t.Fatalf("Finish called %d times with skipped %d, want once with 0", rw.finished, rw.skipped)
			}
			if len(rw.recs) != tc.records {
				t.Fatalf("watcher got %d records, want %d", len(rw.recs), tc.records)
			}
			for i, r := range rw.recs {
				want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m"}`, i)
				if r.Seq != uint64(i+1) || string(r.Body) != want {
					t.Fatalf("record %d: seq %d body %q, want seq %d body %q", i, r.Seq, r.Body, i+1, want)
				}
			}
			if got := openTest(t, path).Meta().Notes["otlp.spans"]; got != "42" {
				t.Fatalf("Meta.Notes[otlp.spans] = %q, want the watcher's note 42", got)
			}
		})
	}
}

// A watcher that stops taking records is cut off after WatchCloseWait:
// Close returns, and Finish learns how many records it never got.
func TestWatchSlowWatcherIsCutOff(t *testing.T) {
	old := WatchCloseWait
	WatchCloseWait = 10 * time.Millisecond
	t.Cleanup(func() { WatchCloseWait = old })
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, CommitEvery: time.Millisecond})
	rw := &recordingWatcher{block: make(chan struct{})}
	w.Watch(rw)
	const n = 50
	for i := range n {
		w.Frame(0, wire.DirClient, int64(i+1), []byte(`{"jsonrpc":"2.0","method":"m"}`), 0, nil)
	}
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	// Release the watcher only once Close has cut it off.
	wa := w.watches[0]
	for deadline := time.Now().Add(waitLimit); !wa.cut.Load() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	close(rw.block)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Close did not return with a blocked watcher")
	}
	if rw.finished != 1 {
		t.Fatalf("Finish called %d times, want 1", rw.finished)
	}
	if got := uint64(rw.count()) + rw.skipped; got != n || rw.skipped == 0 {
		t.Fatalf("delivered %d + skipped %d, want them to add up to %d with some skipped", rw.count(), rw.skipped, n)
	}
}

func TestWatchAfterCloseDoesNothing(t *testing.T) {
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rw := &recordingWatcher{}
	w.Watch(rw)
	time.Sleep(10 * time.Millisecond)
	if rw.finished != 0 || rw.count() != 0 {
		t.Fatalf("a watcher added after Close was called: finished %d, records %d", rw.finished, rw.count())
	}
}
