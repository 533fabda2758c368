package capture

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// plainSource hides a Reader's type, so ScanMatches takes its generic path.
type plainSource struct{ Source }

func TestScanMatchesAgreesWithScan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scan"+Ext)
	w, err := Create(path, WriterOptions{NoSync: true, NoFeed: true, CommitRecords: 100})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().UnixNano()
	for i := 0; i < 2500; i++ {
		ts += int64(time.Millisecond)
		line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s%d","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Word %d"}}}}`+"\n", i%3, i)
		if i%10 == 0 {
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":{"path":"/f%d"}}`+"\n", i, i)
		}
		w.Chunk(0, StreamAgent, ts, []byte(line))
		if i%500 == 0 {
			waitCommitted(t, w, uint64(i+1)) // several commits, so several segments
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Last() != 2500 {
		t.Fatalf("the capture holds %d records, want 2500", r.Last())
	}
	wantAll := map[string]int{"": 2500, "method:fs/*": 250, `"Word 12"`: 100, "word 2499": 1, "params.path=/f100": 1, "nothing-here": 0}
	for _, expr := range []string{"", "method:fs/*", `"Word 12"`, "word 2499", "session:s1 update:agent_*", "params.path=/f100", "nothing-here"} {
		t.Run(expr, func(t *testing.T) {
			f, err := ParseFilter(expr)
			if err != nil {
				t.Fatal(err)
			}
			collect := func(src Source, from, to uint64) (seqs []uint64, seen int) {
				err := ScanMatches(src, f, from, to, func(rec *Record, matched bool) bool {
					seen++
					if matched {
						seqs = append(seqs, rec.Seq)
					}
					return true
				})
				if err != nil {
					t.Fatal(err)
				}
				return seqs, seen
			}
			for _, span := range [][2]uint64{{1, 0}, {7, 1999}, {2400, 2500}} {
				fast, fastSeen := collect(r, span[0], span[1])
				slow, slowSeen := collect(plainSource{r}, span[0], span[1])
				if !equalFilterSeqs(fast, slow) || fastSeen != slowSeen {
					t.Fatalf("span %v: fast path matched %d of %d, generic %d of %d", span, len(fast), fastSeen, len(slow), slowSeen)
				}
				if want, ok := wantAll[expr]; ok && span[1] == 0 && len(fast) != want {
					t.Fatalf("matched %d records, want %d", len(fast), want)
				}
			}
		})
	}
	// fn returning false stops the scan.
	n := 0
	ScanMatches(r, nil, 1, 0, func(*Record, bool) bool { n++; return n < 10 })
	if n != 10 {
		t.Fatalf("the scan went on after fn returned false: %d calls", n)
	}
}
