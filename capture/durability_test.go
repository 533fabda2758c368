package capture

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGKILLDurability kills a writing child mid-stream and checks that
// the file opens, passes tx.Check and holds every record the child saw
// committed, byte for byte.
func TestSIGKILLDurability(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "killed"+Ext)
	t.Cleanup(func() { checkDB(t, path) })
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	counts := make(chan uint64, 1024)
	go func() {
		defer close(counts)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			n, _ := strconv.ParseUint(sc.Text(), 10, 64)
			counts <- n
		}
	}()
	var committed uint64
	deadline := time.After(waitLimit)
	for committed < 20000 {
		select {
		case n, ok := <-counts:
			if !ok {
				t.Fatalf("child ended early after %d records", committed)
			}
			committed = n
		case <-deadline:
			t.Fatalf("child committed only %d records in %v", committed, waitLimit)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	for n := range counts { // what it printed before dying
		committed = max(committed, n)
	}
	cmd.Wait()

	if !fileExists(socketPath(t, path)) {
		t.Error("the killed child left no socket: the stale-socket path is not exercised")
	}
	r, err := Open(path)
	if err != nil {
		t.Fatalf("Open after SIGKILL: %v", err)
	}
	defer r.Close()
	if r.Last() < committed {
		t.Fatalf("file holds %d records, child reported %d committed", r.Last(), committed)
	}
	for _, seq := range []uint64{1, committed / 2, committed} {
		body, err := r.Body(seq)
		if err != nil || string(body) != notif(int(seq)) {
			t.Errorf("record %d = %q, %v", seq, body, err)
		}
	}
	var n uint64
	r.Scan(1, func(rec *Record) bool { n++; return true })
	if n != r.Last() {
		t.Errorf("scanned %d records, Last() = %d", n, r.Last())
	}
	t.Logf("child committed %d records before SIGKILL; file holds %d", committed, r.Last())
	if _, err := List(dir); err != nil || fileExists(socketPath(t, path)) {
		t.Errorf("List did not remove the stale socket (%v)", err)
	}
}

// TestOpenErrors checks every way a file can fail to be a capture.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	valid := dirCapture(t, dir, "valid"+Ext)
	big := bigCapture(t, dir)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o600)
		return p
	}
	truncated := func() string {
		b, _ := os.ReadFile(big)
		db := mustBolt(t, big)
		var used int64
		db.View(func(tx *boltTx) error { used = tx.Size(); return nil })
		db.Close()
		return write("truncated"+Ext, b[:used/2]) // bbolt's file may extend past its last used page
	}
	foreign := filepath.Join(dir, "foreign.db")
	{
		w, err := Create(foreign, WriterOptions{NoFeed: true, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		db := mustBolt(t, foreign)
		db.Update(func(tx *boltTx) error { return tx.DeleteBucket(bucketMeta) })
		db.Close()
	}
	tests := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "nope"+Ext), ErrNotFound},
		{"empty", write("empty"+Ext, nil), ErrCorrupt},
		{"text", write("text"+Ext, []byte("hello, this is not a database at all, not even close\n")), ErrCorrupt},
		{"garbage", write("garbage"+Ext, garbage(64<<10)), ErrCorrupt},
		{"truncated", truncated(), ErrCorrupt},
		{"not ours", foreign, ErrNotCapture},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(tt.path)
			if !errors.Is(err, tt.want) {
				if r != nil {
					r.Close()
				}
				t.Fatalf("Open = %v, want %v", err, tt.want)
			}
		})
	}
	if r, err := Open(valid); err != nil {
		t.Errorf("Open(valid) = %v", err)
	} else {
		r.Close()
	}
}

// TestDamagedPages overwrites pages inside a valid capture: reading it
// may fail, but must never panic or crash.
func TestDamagedPages(t *testing.T) {
	dir := t.TempDir()
	src := bigCapture(t, dir)
	orig, _ := os.ReadFile(src)
	for i, off := range []int{3 * 4096, 5 * 4096, len(orig) / 2, len(orig) - 4096} {
		b := append([]byte(nil), orig...)
		copy(b[off:], garbage(4096))
		p := filepath.Join(dir, "damaged-"+strconv.Itoa(i)+Ext)
		os.WriteFile(p, b, 0o600)
		r, err := Open(p)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("damage at %d: Open = %v, want ErrCorrupt", off, err)
			}
			continue
		}
		var failures int
		scanErr := r.Scan(1, func(rec *Record) bool {
			if rec.Seq%7 == 0 {
				if _, err := r.Body(rec.Seq); err != nil {
					failures++
				}
			}
			return true
		})
		_, lookErr := r.Lookup(IndexMethod, "session/update")
		t.Logf("damage at %d: scan %v, lookup %v, %d bodies unreadable", off, scanErr, lookErr, failures)
		r.Close()
	}
}

// bigCapture writes a capture of a few MiB (many pages) in dir.
func bigCapture(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "big"+Ext)
	if fileExists(path) {
		return path
	}
	w, err := Create(path, WriterOptions{NoFeed: true, NoSync: true, CommitRecords: 500})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("p", 1000)
	for i := 1; i <= 3000; i++ {
		w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+pad+"\n"))
	}
	w.Close()
	checkDB(t, path)
	return path
}

func garbage(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
