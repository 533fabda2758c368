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
	readOnlyDB(t, path).View(func(tx *bolt.Tx) error {
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
		return nil
	})
	db.Close()
	assertPieces(t, w.Path(), 2, len(big))
	r := openTest(t, w.Path())
	for seq, want := range map[uint64]string{1: notif(1), 2: big, 3: notif(3)} {
		if body, err := r.Body(seq); err != nil || string(body) != want {
			t.Errorf("body of #%d: %d bytes, err %v; want %d bytes", seq, len(body), err, len(want))
		}
	}
	assertBodyFilterFinds(t, r, `"big big big"`, 2)
}

// assertBodyFilterFinds checks that expr matches exactly the records want.
func assertBodyFilterFinds(t *testing.T, r *Reader, expr string, want ...uint64) {
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
	if !slices.Equal(found, want) {
		t.Errorf("filter %s matched %v, want %v", expr, found, want)
	}
}

// v3BigLine is the 3 MiB initialize request in
// testdata/v3-big.acpscope.gz, a capture written by format version 3,
// which kept a body larger than a segment whole under one key: the client
// sent it (#1), the echoing agent sent it back (#3), each followed by a
// small session/new.
func v3BigLine() string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"pad":"` +
		strings.Repeat("x", 3<<20+12345) + `"}}`
}

// TestHugeBodiesEveryFormat: a body larger than a segment reads back
// whole, for Body, export and body filters, kept whole under one key
// (format 3) and in pieces of at most bodyPieceBytes (written now, and
// checked on disk).
func TestHugeBodiesEveryFormat(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true})
	now := time.Now().UnixNano()
	small := `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}` + "\n"
	for i, s := range []Stream{StreamClient, StreamAgent} {
		w.Chunk(0, s, now+int64(i), []byte(v3BigLine()+"\n"+small))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	assertPieces(t, w.Path(), 1, len(v3BigLine()))
	files := map[int]string{3: gunzipTestdata(t, "v3-big.acpscope.gz"), FormatVersion: w.Path()}
	for version, path := range files {
		r := openTest(t, path)
		if r.Meta().FormatVersion != version || r.Last() != 4 {
			t.Fatalf("%s: format %d with %d records, want %d with 4", path, r.Meta().FormatVersion, r.Last(), version)
		}
		for _, seq := range []uint64{1, 3} {
			if body, err := r.Body(seq); err != nil || string(body) != v3BigLine() {
				t.Errorf("format %d: body of #%d: %d bytes, err %v; want the %d-byte line", version, seq, len(body), err, len(v3BigLine()))
			}
		}
		if body, err := r.Body(4); err != nil || string(body) != strings.TrimSuffix(small, "\n") {
			t.Errorf("format %d: body of #4 = %q, %v", version, body, err)
		}
		assertBodyFilterFinds(t, r, `"xxxxxxxx"`, 1, 3)
		var jsonl bytes.Buffer
		if _, err := ExportJSONL(r, &jsonl, ExportOptions{NoRedact: true}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(jsonl.String(), `"msg":`+v3BigLine()+`}`); n != 2 {
			t.Errorf("format %d: the export holds the big line %d times, want 2", version, n)
		}
	}
}

// assertPieces checks on disk that the body of segment first, of size
// bytes, is kept in pieces of bodyPieceBytes, the last one shorter.
func assertPieces(t *testing.T, path string, first uint64, size int) {
	t.Helper()
	readOnlyDB(t, path).View(func(tx *bolt.Tx) error {
		own := tx.Bucket(bucketBig).Bucket(seqKey(first))
		if own == nil {
			t.Fatalf("segment %d has no bucket in bodies-big", first)
		}
		var i uint32
		total := 0
		own.ForEach(func(k, v []byte) error {
			if !bytes.Equal(k, pieceKey(i)) || len(v) > bodyPieceBytes || len(v) < bodyPieceBytes && total+len(v) != size {
				t.Errorf("piece %d: key %x, %d bytes", i, k, len(v))
			}
			i++
			total += len(v)
			return nil
		})
		if total != size {
			t.Errorf("the pieces hold %d bytes, want %d", total, size)
		}
		return nil
	})
}

// TestDamagedPieces: a huge body whose pieces were tampered with (one
// more, under a key far past the last) reads as an error naming the
// segment, not as a crash or an allocation the key asks for.
func TestDamagedPieces(t *testing.T) {
	w := createTest(t, WriterOptions{NoFeed: true, NoSync: true})
	w.Chunk(0, StreamAgent, time.Now().UnixNano(), []byte(v3BigLine()+"\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(w.Path(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBig).Bucket(seqKey(1)).Put(pieceKey(1<<31), []byte("x"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r := openTest(t, w.Path())
	if body, err := r.Body(1); err == nil || !strings.Contains(err.Error(), "segment 1") {
		t.Fatalf("Body of a tampered huge body: %d bytes, err %v; want an error naming segment 1", len(body), err)
	}
}
