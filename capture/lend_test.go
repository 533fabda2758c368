package capture

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// scribbledLoan is a lent buffer that is overwritten the moment it is
// returned, as a proxy reusing it for its next read would: a Writer that
// read it after Return would record the scribble.
type scribbledLoan struct {
	buf      []byte
	returned atomic.Int32
}

func (l *scribbledLoan) Return() {
	if l.returned.Add(1) == 1 {
		for i := range l.buf {
			l.buf[i] = '#'
		}
	}
}

// TestLendFrame: every loan is returned exactly once, whether its frame
// is recorded straight away, goes through the spool while the committer
// is stalled, is dropped because the queue is full, or is a segment of
// its own, held until committed; and what is recorded is what was lent,
// never the scribble made on its return.
func TestLendFrame(t *testing.T) {
	tests := []struct {
		name  string
		opts  WriterOptions
		n     int // frames lent
		size  int
		stall bool // hold the committer until every frame is lent
		want  string
	}{
		{"recorded", WriterOptions{CommitRecords: 50}, 400, 1000, false, "none lost"},
		// A group per frame: with the committer stalled, the builder has
		// handed over all it may (commitsWaiting) after a few frames, and
		// the rest must go through the spool, or be dropped without one.
		{"spooled", WriterOptions{QueueBytes: 64 << 10, CommitRecords: 1}, 400, 1000, true, "spooled"},
		{"dropped", WriterOptions{QueueBytes: 64 << 10, QueueChunks: 8, SpoolBytes: -1, CommitRecords: 1}, 400, 1000, true, "some lost"},
		{"bigger than a segment", WriterOptions{CommitRecords: 5}, 10, segMaxBytes + 1, false, "none lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := make(chan struct{})
			var open sync.Once
			release := func() { open.Do(func() { close(gate) }) }
			t.Cleanup(release)
			tt.opts.NoSync, tt.opts.NoFeed = true, true
			if tt.stall {
				tt.opts.commitGate = gate
			} else {
				release()
			}
			w := createTest(t, tt.opts)
			n := tt.n
			var sent [][]byte
			var loans []*scribbledLoan
			for i := range n {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"i":%d,"pad":"%s"}}`, i, strings.Repeat("p", tt.size))
				sent = append(sent, []byte(body))
				l := &scribbledLoan{buf: []byte(body)}
				loans = append(loans, l)
				if tt.want == "spooled" { // what the builder has not spilled yet must fit the queue
					waitUntil(t, func() bool { return w.Stats().Queued <= 32<<10 },
						func() string {
							return fmt.Sprintf("%d bytes still queued: the builder does not spool", w.Stats().Queued)
						})
				}
				w.LendFrame(1, wire.DirAgent, int64(i), l.buf, 0, &wire.Envelope{Stream: wire.StreamConnection}, l)
			}
			release()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			for i, l := range loans {
				if got := l.returned.Load(); got != 1 {
					t.Fatalf("loan %d returned %d times, want once", i, got)
				}
			}
			st := w.Stats()
			r := openTest(t, w.Path())
			recorded := 0
			err := r.Scan(1, func(rec *Record) bool {
				body, err := r.Body(rec.Seq)
				if err != nil {
					t.Fatal(err)
				}
				i := int(rec.Time)
				if !bytes.Equal(body, sent[i]) {
					t.Fatalf("frame %d recorded as %.50q…, want %.50q…", i, body, sent[i])
				}
				recorded++
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if recorded+int(st.Loss.Messages) != n {
				t.Fatalf("%d recorded + %d lost, want the %d lent", recorded, st.Loss.Messages, n)
			}
			switch got := st.Loss.Messages; {
			case tt.want == "some lost" && got == 0:
				t.Fatalf("a full queue without a spool lost nothing of %d frames: %+v", n, st)
			case tt.want != "some lost" && got != 0:
				t.Fatalf("lost %d of %d frames: %+v", got, n, st)
			case tt.want == "spooled" && st.Backlog.Peak == 0:
				t.Fatalf("with the committer stalled nothing went through the spool: %+v", st)
			}
		})
	}
}
