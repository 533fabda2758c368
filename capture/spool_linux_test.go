package capture

import (
	"bytes"
	"syscall"
	"testing"
)

// TestSpoolGivesBackDisk: data read back is punched out of the file in
// punchStep pieces, so a backlog that never quite empties does not hold
// the disk it has recorded.
func TestSpoolGivesBackDisk(t *testing.T) {
	sp, cb := testSpool(t, 1<<30)
	chunk := append(bytes.Repeat([]byte("d"), maxPooledChunk-1), '\n')
	n := 3 * punchStep / len(chunk)
	for range n + 1 {
		sp.push(item{kind: itemChunk, data: cb.copyOf(cb.class(len(chunk)), chunk)}, cb.release)
	}
	for range n {
		it, _, err := sp.pop(cb.alloc)
		if err != nil || !bytes.Equal(it.data, chunk) {
			t.Fatalf("read back %d bytes, %v", len(it.data), err)
		}
		cb.release(it.data)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(sp.f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if onDisk, most := st.Blocks*512, int64(len(chunk))+punchStep; sp.held() > most || onDisk > most {
		t.Errorf("with %d bytes unread the file holds %d on disk (%d by its count): read-back data is not given back (freed up to %d of %d read)",
			sp.unread(), onDisk, sp.held(), sp.freed, sp.rd)
	}
}
