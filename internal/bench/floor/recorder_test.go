package main

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestRecorderKeepsWhatItsQueueHolds: what the writer has written leaves
// the queue's count, so a stream three times the queue's bound, offered
// a chunk at a time once the queue is empty, is kept whole and written
// in order.
func TestRecorderKeepsWhatItsQueueHolds(t *testing.T) {
	const queue, chunks = 1 << 20, 12
	path := t.TempDir() + "/floor"
	r, err := newRecorder(config{path: path, queueBytes: queue, commitBytes: 4 << 20, commitEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var l lineLoss
	var want []byte
	for i := range chunks {
		if !waitFor(2*time.Minute, func() bool { return r.queued.Load() == 0 }) {
			r.stop()
			t.Fatalf("after %d chunks of %d KiB the queue still counts %d bytes, with the writer idle", i, queue/4>>10, r.queued.Load())
		}
		chunk := append(bytes.Repeat([]byte{'a' + byte(i)}, queue/4-1), '\n')
		r.offer(chunk, &l)
		want = append(want, chunk...)
	}
	r.stop()
	if l.lines.Load() != 0 || l.bytes.Load() != 0 {
		t.Errorf("lost %d lines, %d bytes; want none", l.lines.Load(), l.bytes.Load())
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
		t.Errorf("the file does not start with the %d bytes offered", len(want))
	}
}

// waitFor polls cond until it holds or limit has passed; it reports
// whether it held.
func waitFor(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); !cond(); {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
