package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	r := openTest(t, gunzipTestdata(t, "v1-big.acpscope.gz"))
	if v := r.Meta().FormatVersion; v != 1 || r.Last() != 5 {
		t.Fatalf("format version %d, %d records; want 1 and 5", v, r.Last())
	}
	body, err := r.Body(4)
	if err != nil || string(body) != v1BigBody() {
		t.Fatalf("body of #4: %d bytes, err %v", len(body), err)
	}
	assertBodyFilterFinds(t, r, `"v1 v1 v1"`, 4)
}

// gunzipTestdata writes testdata/name, uncompressed, to a temporary file
// and returns its path.
func gunzipTestdata(t *testing.T, name string) string {
	t.Helper()
	gz, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), strings.TrimSuffix(name, ".gz"))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestIDLookupEveryFormat: request ids are found the same way in a format
// 2 capture (id index keys bucket first, testdata/v2-ids.acpscope.gz,
// written in two commits, one per chunk) and in one written now from the
// same traffic (commit seq first, checked on disk).
func TestIDLookupEveryFormat(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true, CommitRecords: 3})
	now := time.Now().UnixNano()
	w.Chunk(0, StreamClient, now, []byte(v2ClientLines))
	w.Chunk(0, StreamAgent, now+1000, []byte(v2AgentLines))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	assertIDKeysInCommitOrder(t, w.Path())
	files := map[int]string{2: gunzipTestdata(t, "v2-ids.acpscope.gz"), FormatVersion: w.Path()}
	lookups := []struct {
		ix   Index
		term string
		want []uint64
	}{
		{IndexIDClient, "1", []uint64{1, 5, 6}}, // the id used twice, and the answer
		{IndexIDClient, `"two"`, []uint64{2, 7}},
		{IndexIDClient, "two", nil}, // ids are exact bytes
		{IndexIDClient, "3", []uint64{3, 9}},
		{IndexIDClient, "7", nil},
		{IndexIDAgent, "7", []uint64{4, 8}}, // answered before it was asked
		{IndexIDAgent, "1", nil},
	}
	for version, path := range files {
		r := openTest(t, path)
		if r.Meta().FormatVersion != version {
			t.Fatalf("%s: format %d, want %d", path, r.Meta().FormatVersion, version)
		}
		for _, l := range lookups {
			got, err := r.Lookup(l.ix, l.term)
			if err != nil || !slices.Equal(got, l.want) {
				t.Errorf("format %d: Lookup(%d, %s) = %v, %v; want %v", version, l.ix, l.term, got, err, l.want)
			}
		}
	}
}

// assertIDKeysInCommitOrder checks the id index keys of a capture of this
// format: 9 bytes, the first eight a commit's first seq (a segment starts
// there), in ascending order.
func assertIDKeysInCommitOrder(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		var prev uint64
		n := 0
		for _, name := range [][]byte{bucketIDClient, bucketIDAgent} {
			prev = 0
			tx.Bucket(name).ForEach(func(k, _ []byte) error {
				n++
				if len(k) != 9 {
					t.Fatalf("%s key %x: %d bytes, want 9", name, k, len(k))
				}
				seq := binary.BigEndian.Uint64(k[:8])
				if seq < prev || tx.Bucket(bucketMsgs).Get(seqKey(seq)) == nil {
					t.Errorf("%s key %x: seq %d is not a commit's first record in order (previous %d)", name, k, seq, prev)
				}
				prev = seq
				return nil
			})
		}
		if n == 0 {
			t.Error("no id index keys")
		}
		return nil
	})
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
