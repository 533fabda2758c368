package capture

import (
	"os"
	"testing"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// TestHugeBodiesLeaveThePageCache: once committed, the pages a body
// larger than a segment was written to are dropped from the page cache
// (uncacheBig), and the capture still reads back whole.
func TestHugeBodiesLeaveThePageCache(t *testing.T) {
	path := tempCapture(t)
	var fs unix.Statfs_t
	if err := unix.Statfs(t.TempDir(), &fs); err == nil && fs.Type == unix.TMPFS_MAGIC {
		t.Skip("the temporary directory is on tmpfs, whose pages are the file itself: point TMPDIR at a disk to run this")
	}
	w, err := Create(path, WriterOptions{NoFeed: true})
	if err != nil {
		t.Fatal(err)
	}
	line := bigLine(4<<20) + "\n"
	for off := 0; off < len(line); off += 64 << 10 {
		w.Chunk(0, StreamAgent, time.Now().UnixNano(), []byte(line[off:min(off+64<<10, len(line))]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true}) // tx.Page needs the freelist
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var body []byte
	db.View(func(tx *bolt.Tx) error {
		own := tx.Bucket(bucketBig).Bucket(seqKey(1))
		if own == nil {
			t.Fatal("the 4 MiB line is not in bodies-big")
		}
		// Finding a piece reads the first page of its leaf, and the
		// page cache drops a large folio only when all of it is asked
		// for: a few pages at the edges of the leaves may stay.
		const margin = 64 << 10
		page := int64(os.Getpagesize())
		var resident, pages int64
		c := own.Cursor()
		for k, piece := c.First(); k != nil; k, piece = c.Next() {
			start := int64(uintptr(unsafe.Pointer(unsafe.SliceData(piece))) - db.Info().Data)
			off := (start + margin + page - 1) &^ (page - 1)
			n := (start + int64(len(piece)) - off) &^ (page - 1)
			if n > 0 {
				resident += int64(residentPages(t, path, off, n))
				pages += n / page
			}
		}
		if pages == 0 || resident > pages/100 {
			t.Errorf("%d of the body's %d pages are still in the page cache", resident, pages)
		}
		all, owned := segmentBodies(tx, 1)
		if !owned {
			t.Error("a huge body read back as one value, not pieces")
		}
		body = all
		return nil
	})
	if string(body)+"\n" != line {
		t.Fatalf("the body read back is %d bytes, want the %d-byte line", len(body), len(line)-1)
	}
}

// residentPages counts the pages of the file at path in [off, off+n)
// that are in the page cache.
func residentPages(t *testing.T, path string, off, n int64) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), off, int(n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (n+int64(os.Getpagesize())-1)/int64(os.Getpagesize()))
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident
}
