package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	bolt "go.etcd.io/bbolt"
)

// lsRows runs ls --json in dir and returns its rows.
func lsRows(t *testing.T, dir string) []map[string]any {
	t.Helper()
	r := runCLI(t, nil, "ls", "--dir", dir, "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("ls --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	return rows
}

// lsLine returns the table row of ls naming file.
func lsLine(t *testing.T, dir, file string) string {
	t.Helper()
	r := runCLI(t, nil, "ls", "--dir", dir)
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, file+" ") {
			return line
		}
	}
	t.Fatalf("ls lists no %s:\n%s%s", file, r.stdout, r.stderr)
	return ""
}

// TestLsUncleanAfterSIGKILL: a proxy killed with SIGKILL leaves a capture
// with no end; ls calls it unclean, with the duration up to its last
// record, and says which command recorded it.
func TestLsUncleanAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	proxy, editor := startEchoProxy(t, dir)
	defer editor.Close()
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(editor, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	waitFor(t, func() bool { // committed: echoed, so six records
		rows := lsRows(t, dir)
		return len(rows) == 1 && rows[0]["messages"] == 6.0
	})
	if err := proxy.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	proxy.Wait()
	waitFor(t, func() bool { rows := lsRows(t, dir); return len(rows) == 1 && rows[0]["live"] == false })
	row := lsRows(t, dir)[0]
	if row["state"] != "unclean" || row["role"] != "proxy" || row["messages"] != 6.0 {
		t.Errorf("ls --json after SIGKILL: state %v, role %v, messages %v; want unclean, proxy, 6", row["state"], row["role"], row["messages"])
	}
	line := lsLine(t, dir, filepath.Base(row["path"].(string)))
	fields := strings.Fields(line)
	// CAPTURE START(2) AGENT ROLE DURATION MSGS SIZE(2) STATE …
	if len(fields) < 10 || fields[4] != "proxy" || fields[5] == "-" || fields[6] != "6" || fields[9] != "unclean" {
		t.Errorf("ls row after SIGKILL: %q; want role proxy, a duration, 6 messages, unclean", line)
	}
}

// TestLsCountsHeldRecords: MSGS is how many records a capture holds,
// not its last sequence number, which failed commits leave above it.
func TestLsCountsHeldRecords(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "many.jsonl")
	var b strings.Builder
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&b, `{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","n":%d}}}`+"\n", i)
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "20260101T000000Z-many-1.acpscope")
	if _, err := capture.Import(src, path); err != nil {
		t.Fatal(err)
	}
	dropSecondSegment(t, path)
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	r.Scan(1, func(*capture.Record) bool { held++; return true })
	r.Close()
	if held == 600 || held == 0 {
		t.Fatalf("the capture holds %d records after dropping a segment", held)
	}
	fields := strings.Fields(lsLine(t, dir, filepath.Base(path)))
	if len(fields) < 10 || fields[6] != fmt.Sprint(held) || fields[4] != "import" || fields[9] != "finished" {
		t.Errorf("ls row %q; want role import, %d messages (not 600), finished", fields, held)
	}
	if row := lsRows(t, dir)[0]; row["messages"] != float64(held) || row["lastSeq"] != 600.0 {
		t.Errorf("ls --json: messages %v, lastSeq %v; want %d and 600", row["messages"], row["lastSeq"], held)
	}
}

// dropSecondSegment removes the records and bodies of a capture's second
// segment, as a commit that failed would have left them: never written.
func dropSecondSegment(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte("msgs")).Cursor()
		c.First()
		k, _ := c.Next()
		if k == nil {
			return io.ErrUnexpectedEOF
		}
		key := append([]byte(nil), k...)
		if err := tx.Bucket([]byte("bodies")).Delete(key); err != nil {
			return err
		}
		return tx.Bucket([]byte("msgs")).Delete(key)
	})
	if err != nil {
		t.Fatalf("dropping a segment: %v", err)
	}
}
