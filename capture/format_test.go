package capture

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// v1BigBody is the 300 KB message in testdata/v1-big.acpscope.gz, a
// capture written by format version 1 (before bodies-big).
func v1BigBody() string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` +
		strings.Repeat("v1 ", 100000) + `"}}}}`
}

// TestReadsFormatV1: captures written before bodies-big still open, big
// bodies included, for reading and for body filters.
func TestReadsFormatV1(t *testing.T) {
	gz, err := os.Open("testdata/v1-big.acpscope.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.acpscope")
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, path)
	if v := r.Meta().FormatVersion; v != 1 || r.Last() != 5 {
		t.Fatalf("format version %d, %d records; want 1 and 5", v, r.Last())
	}
	body, err := r.Body(4)
	if err != nil || string(body) != v1BigBody() {
		t.Fatalf("body of #4: %d bytes, err %v", len(body), err)
	}
	assertBodyFilterFinds(t, r, `"v1 v1 v1"`, 4)
}

// TestBigBodyInItsOwnBucket: a body larger than a segment is stored once,
// in bodies-big, and reads back whole through every reader.
func TestBigBodyInItsOwnBucket(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true})
	big := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"text":"` + strings.Repeat("big ", 1<<18) + `"}}}`
	w.Chunk(0, StreamAgent, time.Now().UnixNano(), []byte(notif(1)+"\n"+big+"\n"+notif(3)+"\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(w.Path(), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketBodies).Get(seqKey(2)) != nil {
			t.Error("the big body is also in bodies")
		}
		own := tx.Bucket(bucketBig).Bucket(seqKey(2))
		if own == nil || !bytes.Equal(own.Get(keyBody), []byte(big)) {
			t.Error("bodies-big does not hold the big body under its segment key")
		}
		return nil
	})
	db.Close()
	r := openTest(t, w.Path())
	for seq, want := range map[uint64]string{1: notif(1), 2: big, 3: notif(3)} {
		if body, err := r.Body(seq); err != nil || string(body) != want {
			t.Errorf("body of #%d: %d bytes, err %v; want %d bytes", seq, len(body), err, len(want))
		}
	}
	assertBodyFilterFinds(t, r, `"big big big"`, 2)
}

func assertBodyFilterFinds(t *testing.T, r *Reader, expr string, want uint64) {
	t.Helper()
	f, err := ParseFilter(expr)
	if err != nil {
		t.Fatal(err)
	}
	var found []uint64
	if err := ScanMatches(r, f, 1, r.Last(), func(rec *Record, matched bool) bool {
		if matched {
			found = append(found, rec.Seq)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0] != want {
		t.Errorf("filter %s matched %v, want [%d]", expr, found, want)
	}
}
