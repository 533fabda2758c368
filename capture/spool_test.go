package capture

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// testSpool makes a spool bounded by limit in a temporary directory, and
// the pool its data comes from.
func testSpool(t *testing.T, limit int64) (*spool, *chunkBuffers) {
	sp := newSpool(t.TempDir(), limit)
	t.Cleanup(sp.close)
	return sp, new(chunkBuffers)
}

// TestSpoolOrder: items of every kind come out of the spool in the order
// they went in, with their data, whether it went to disk or stayed in
// memory, and the file rewinds once the spool is empty.
func TestSpoolOrder(t *testing.T) {
	sp, cb := testSpool(t, 1<<30)
	huge := bytes.Repeat([]byte("h"), maxPooledChunk+1)
	tests := []struct {
		name   string
		it     item
		toDisk bool
	}{
		{"a pooled chunk", item{kind: itemChunk, data: cb.copyOf(cb.class(40<<10), append(bytes.Repeat([]byte("a"), 40<<10-1), '\n'))}, true},
		{"a piece of a long line", item{kind: itemChunk, data: bytes.Repeat([]byte("l"), 64<<10)}, false},
		{"a small chunk", item{kind: itemChunk, data: []byte("{}\n")}, true},
		{"a stream's end", item{kind: itemEnd, stream: StreamAgent}, false},
		{"a pooled frame", item{kind: itemFrame, pooled: true, data: cb.copyOf(cb.class(20<<10), bytes.Repeat([]byte("f"), 20<<10))}, true},
		{"a frame handed over", item{kind: itemFrame, data: []byte(`{"jsonrpc":"2.0"}`), env: &wire.Envelope{}}, true},
		{"a line larger than a pooled chunk", item{kind: itemChunk, data: huge}, false},
		{"a frame acpscope altered", item{kind: itemFrame, data: []byte(`{}`), fault: &protocol.Fault{}}, false},
	}
	var want [][]byte
	for _, tt := range tests {
		want = append(want, append([]byte(nil), tt.it.data...))
		if got := sp.push(tt.it, cb.release); got != tt.toDisk {
			t.Errorf("%s: went to disk = %v, want %v", tt.name, got, tt.toDisk)
		}
	}
	if sp.wr == 0 || sp.f == nil {
		t.Fatalf("nothing written to the spool's file (wr %d)", sp.wr)
	}
	for i, tt := range tests {
		it, fromDisk, err := sp.pop(cb.alloc)
		if err != nil {
			t.Fatal(err)
		}
		if fromDisk != tt.toDisk || it.kind != tt.it.kind || !bytes.Equal(it.data, want[i]) || it.env != tt.it.env {
			t.Errorf("%s: came back as kind %d, %d bytes, from disk %v; want kind %d, %d bytes, from disk %v",
				tt.name, it.kind, len(it.data), fromDisk, tt.it.kind, len(want[i]), tt.toDisk)
		}
	}
	if sp.active() || sp.wr != 0 || sp.rd != 0 {
		t.Errorf("emptied spool: active %v, file offsets %d and %d, want rewound", sp.active(), sp.wr, sp.rd)
	}
	if fi, err := sp.f.Stat(); err != nil || fi.Size() != 0 {
		t.Errorf("emptied spool's file: %v, %v; want it cut to nothing", fi, err)
	}
}

// TestSpoolBounds: past its byte bound the spool keeps data in memory
// (where the tap's bound applies), and past its item bound it says so.
func TestSpoolBounds(t *testing.T) {
	sp, cb := testSpool(t, 100<<10)
	chunk := append(bytes.Repeat([]byte("c"), 40<<10-1), '\n')
	var onDisk []bool
	for range 3 {
		onDisk = append(onDisk, sp.push(item{kind: itemChunk, data: cb.copyOf(cb.class(len(chunk)), chunk)}, cb.release))
	}
	if fmt.Sprint(onDisk) != "[true true false]" {
		t.Errorf("three 40 KiB chunks into a 100 KiB spool went to disk %v, want [true true false]", onDisk)
	}
	if sp.held() > sp.limit {
		t.Errorf("the file holds %d bytes, over the bound of %d", sp.held(), sp.limit)
	}
	for !sp.full() {
		sp.push(item{kind: itemEnd}, cb.release)
	}
	if n := len(sp.items) - sp.head; n != spoolMaxItems {
		t.Errorf("full at %d items, want %d", n, spoolMaxItems)
	}
}

// TestWriterCatchesUpThroughSpool: with the committer stalled (a disk
// that stopped for a while) and a queue of 1 MiB, forty times that is
// sent; the tap never waits, the builder moves what it cannot record yet
// to its spool, and once the disk moves again every line is recorded, in
// order, nothing lost. Without the spool the queue would stay full and
// the feed below would wait for room in vain.
func TestWriterCatchesUpThroughSpool(t *testing.T) {
	gate := make(chan struct{})
	var ws warnings
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, commitGate: gate, Warn: ws.warn,
		QueueBytes: 1 << 20, CommitRecords: 1000})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release)
	const lines, perChunk = 40000, 40 // about 40 MiB
	var sent [][]byte
	for i := 0; i < lines; i += perChunk {
		var chunk []byte
		for j := i; j < i+perChunk; j++ {
			l := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"n":%d,"pad":"%s"}}`, j, strings.Repeat("p", 960))
			sent = append(sent, []byte(l))
			chunk = append(chunk, l+"\n"...)
		}
		waitUntil(t, func() bool { return w.Stats().Queued <= 1<<19 },
			func() string {
				return fmt.Sprintf("%d bytes still queued with the committer stalled: the builder does not spool", w.Stats().Queued)
			})
		w.Chunk(0, StreamAgent, int64(i), chunk)
	}
	if st := w.Stats(); st.Loss.Messages != 0 || st.Backlog.Peak < 8<<20 {
		t.Fatalf("with the committer stalled: %+v; want nothing lost and the backlog on disk", st)
	}
	entries, _ := os.ReadDir(filepath.Dir(w.Path()))
	for _, e := range entries {
		if strings.Contains(e.Name(), "spool") {
			t.Errorf("%s is visible beside the capture; the spool's file must be unlinked", e.Name())
		}
	}
	release()
	w.EndStream(0, StreamAgent, lines)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, w.Path())
	got := streamBodies(t, r)[StreamAgent]
	if len(got) != len(sent) {
		t.Fatalf("recorded %d lines of %d; loss %+v", len(got), len(sent), r.Meta().Loss)
	}
	for i := range sent {
		if !bytes.Equal(got[i], sent[i]) {
			t.Fatalf("line %d recorded as %.60q…, want %.60q…", i, got[i], sent[i])
		}
	}
	m := r.Meta()
	if m.Loss.Messages != 0 || m.Backlog.Bytes < 30<<20 || m.Backlog.Peak < 8<<20 {
		t.Errorf("stored loss %+v, backlog %+v; want none lost and the backlog noted", m.Loss, m.Backlog)
	}
}

// TestSpoolFullDropsAndCounts: with the committer stalled and a spool
// bound of 4 MiB, what fits neither the queue nor the spool is dropped
// and counted, and the rest is recorded: the spool delays loss, it
// never hides it.
func TestSpoolFullDropsAndCounts(t *testing.T) {
	gate := make(chan struct{})
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, commitGate: gate, SpoolBytes: 4 << 20,
		QueueBytes: 1 << 20, CommitRecords: 100})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release)
	line := append(bytes.Repeat([]byte("z"), 1023), '\n')
	chunk := bytes.Repeat(line, 32) // 32 KiB
	sent := 0
	for w.Stats().Loss.Messages == 0 {
		if sent > 4096 { // 128 MiB, thirty times what queue and spool hold
			t.Fatalf("%d chunks sent with the committer stalled and nothing lost: %+v", sent, w.Stats())
		}
		w.Chunk(0, StreamAgent, int64(sent), chunk)
		sent++
	}
	if st := w.Stats(); st.Backlog.Peak > 4<<20 {
		t.Errorf("the spool held %d bytes, over its bound of %d", st.Backlog.Peak, 4<<20)
	}
	release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if total := uint64(sent * 32); st.Committed+uint64(st.Loss.Messages) != total {
		t.Errorf("%d committed + %d lost, want the %d lines sent", st.Committed, st.Loss.Messages, total)
	}
}

// TestSayBehind: Close speaks of a backlog only when waiting for it is
// worth a word, and says how much.
func TestSayBehind(t *testing.T) {
	tests := []struct {
		unread int64
		want   string
	}{
		{0, ""},
		{sayBehindAtExit - 1, ""},
		{sayBehindAtExit, "capture is 32.0 MiB behind the wire; recording it before exit"},
		{700 << 20, "capture is 700.0 MiB behind the wire; recording it before exit"},
	}
	for _, tt := range tests {
		var ws warnings
		w := &Writer{opts: WriterOptions{Warn: ws.warn}}
		w.sayBehind(&spool{wr: tt.unread + 5, rd: 5})
		if got := strings.Join(ws.all(), "\n"); got != tt.want {
			t.Errorf("%d bytes unread: said %q, want %q", tt.unread, got, tt.want)
		}
	}
}

// TestBacklogCopied: a writer that never spooled keeps the backlog of
// the metadata it was given, as an export of a recording does.
func TestBacklogCopied(t *testing.T) {
	given := Backlog{Bytes: 300 << 20, Peak: 90 << 20}
	w, err := Create(tempCapture(t), copyOptions(Meta{Backlog: given}))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := openTest(t, w.Path()).Meta().Backlog; got != given {
		t.Errorf("backlog %+v, want the %+v it was given", got, given)
	}
}

// TestUnspoolReadFailure: data the spool cannot read back is counted
// lost and said; a chunk comes back as a gap in its own stream (the
// framer cuts the line it was part of), a frame not at all.
func TestUnspoolReadFailure(t *testing.T) {
	tests := []struct {
		name   string
		it     item
		wantOK bool
	}{
		{"a chunk", item{kind: itemChunk, stream: StreamAgent, conn: 3, t: 7, data: []byte("{}\n{\"a\":")}, true},
		{"a frame", item{kind: itemFrame, conn: 3, t: 7, data: []byte(`{"jsonrpc":"2.0"}`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ws warnings
			w := &Writer{opts: WriterOptions{Warn: ws.warn}}
			sp, _ := testSpool(t, 1<<30)
			if !sp.push(tt.it, w.tap.buffers.release) {
				t.Fatal("the item did not go to disk")
			}
			sp.f.Close() // every read back fails
			it, ok := w.unspool(sp)
			if ok != tt.wantOK {
				t.Fatalf("unspool reports %v, want %v", ok, tt.wantOK)
			}
			if ok && (it.kind != itemChunk || it.data != nil || !it.gap || !it.resync || it.stream != StreamAgent || it.conn != 3) {
				t.Errorf("came back as %+v, want an empty chunk of the same stream marking a gap to resynchronise after", it)
			}
			if w.tap.lostMsgs.Load() != 1 || w.tap.lostBytes.Load() != int64(len(tt.it.data)) || w.tap.lossEvents.Load() != 1 {
				t.Errorf("lost %d messages, %d bytes, %d events; want 1, %d, 1", w.tap.lostMsgs.Load(), w.tap.lostBytes.Load(), w.tap.lossEvents.Load(), len(tt.it.data))
			}
			if st := w.tap.stream(3, StreamAgent); st.gap.Load() {
				t.Error("the tap's stream was marked: its next chunk would claim a gap that is already behind it")
			}
			if said := ws.all(); len(said) != 1 || !strings.Contains(said[0], "capture lost what it had spooled") {
				t.Errorf("said %q", said)
			}
		})
	}
}

// TestGroupsWaitForTheCommitter: with the committer stalled, the builder
// hands over group after group rather than stopping at the first, so a
// long line's chunks leave the tap's queue, and once the committer moves
// again every line is recorded in order.
func TestGroupsWaitForTheCommitter(t *testing.T) {
	gate := make(chan struct{})
	w := createTest(t, WriterOptions{NoSync: true, NoFeed: true, commitGate: gate, CommitBytes: 1 << 20})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release)
	const lines, size = 12, 2 << 20
	var sent [][]byte
	for i := range lines {
		line := bytes.Repeat([]byte{byte('a' + i)}, size)
		sent = append(sent, line)
		for off := 0; off < size; off += 64 << 10 {
			// The tap drops what it has no room for, and a loaded
			// machine can leave the builder behind: send only into
			// room, which the builder makes only by handing groups over.
			waitForQueueRoom(t, w)
			w.Chunk(0, StreamAgent, int64(i), bytes.Clone(line[off:off+64<<10]))
		}
		w.Chunk(0, StreamAgent, int64(i), []byte("\n"))
	}
	// One group is with the stalled committer; the others wait for it.
	waitUntil(t, func() bool { return len(w.commits) == lines-1 && w.Stats().Queued == 0 },
		func() string {
			return fmt.Sprintf("%d groups wait for the committer and %d bytes are queued: want %d and none (lost %+v)",
				len(w.commits), w.Stats().Queued, lines-1, w.Stats().Loss)
		})
	if l := w.Stats().Loss; l.Messages != 0 || l.Bytes != 0 {
		t.Fatalf("lost %+v: the test needs every line recorded", l)
	}
	release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := w.awaiting.Load(); n != 0 {
		t.Errorf("%d bytes still counted as waiting for the committer after Close", n)
	}
	got := streamBodies(t, openTest(t, w.Path()))[StreamAgent]
	if len(got) != lines {
		t.Fatalf("%d lines recorded, want %d; loss %+v", len(got), lines, w.Stats().Loss)
	}
	for i := range sent {
		if !bytes.Equal(got[i], sent[i]) {
			t.Errorf("line %d: %d bytes recorded, not the %d sent", i, len(got[i]), len(sent[i]))
		}
	}
}

// TestRoomToWait: a group may always wait when none does; past that,
// only while the groups waiting hold commitWaitBytes or less with it,
// and for a copy (noWire), which promises its memory, never.
func TestRoomToWait(t *testing.T) {
	tests := []struct {
		name    string
		waiting []int64 // bytes of the groups already waiting
		next    int64
		want    bool
		noWire  bool
	}{
		{"none waits, any size", nil, 1 << 30, true, false},
		{"room left", []int64{10 << 20, 10 << 20}, 10 << 20, true, false},
		{"exactly the bound", []int64{commitWaitBytes - 1<<20}, 1 << 20, true, false},
		{"past the bound", []int64{60 << 20}, 10 << 20, false, false},
		{"a huge one waits alone", []int64{100 << 20}, 0, false, false},
		{"empty groups take no room", []int64{0, 0, 0}, commitWaitBytes, true, false},
		{"a copy's first", nil, 2 << 20, true, true},
		{"a copy's second", []int64{2 << 20}, 2 << 20, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Writer{opts: WriterOptions{noWire: tt.noWire}, commits: make(chan *group, commitsWaiting)}
			for _, b := range tt.waiting {
				w.commits <- &group{bytes: b}
				w.awaiting.Add(b)
			}
			if got := w.roomToWait(&group{bytes: tt.next}); got != tt.want {
				t.Errorf("roomToWait = %v, want %v", got, tt.want)
			}
		})
	}
}
