package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// followed collects what Follow hands over.
type followed struct {
	seqs     []uint64
	caughtUp int
	flushed  bool // CaughtUp ran after the last record
	resumed  []uint64
}

func (f *followed) options(from uint64) FollowOptions {
	return FollowOptions{
		From:     from,
		Record:   func(r *Record) error { f.seqs, f.flushed = append(f.seqs, r.Seq), false; return nil },
		CaughtUp: func() error { f.caughtUp, f.flushed = f.caughtUp+1, true; return nil },
		Resumed:  func(at uint64, _ error) { f.resumed = append(f.resumed, at) },
	}
}

// checkRun checks seqs is exactly from, from+1, …, to: each record
// handed over once, in order.
func (f *followed) checkRun(t *testing.T, from, to uint64) {
	t.Helper()
	if uint64(len(f.seqs)) != to-from+1 {
		t.Fatalf("handed over %d records, want %d to %d: %v", len(f.seqs), from, to, f.seqs)
	}
	for i, seq := range f.seqs {
		if seq != from+uint64(i) {
			t.Fatalf("record %d handed over as #%d: %v", seq, i, f.seqs)
		}
	}
}

// finishedTest writes n notifications into a finished capture.
func finishedTest(t *testing.T, n int) string {
	t.Helper()
	path := tempCapture(t)
	w, err := Create(path, WriterOptions{NoSync: true, NoFeed: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// feedLines is the feed a proxy would serve for the capture at path: its
// opening line (lines[0]) and each record's line.
func feedLines(t *testing.T, path string) []string {
	t.Helper()
	r := openTest(t, path)
	defer r.Close()
	head, _ := json.Marshal(map[string]any{"meta": r.Meta(), "last": r.Last()})
	lines := []string{string(head) + "\n"}
	for _, rec := range readAll(t, r) {
		lines = append(lines, string(AppendJSONL(nil, &rec))+"\n")
	}
	return lines
}

// serveFeed plays a proxy's feed on path's socket for up to turns
// subscribers in turn: each gets what answer returns for its turn and the
// record it asked to start from, then is hung up on. After the last turn
// the socket goes, as a proxy's does when it exits.
func serveFeed(t *testing.T, path string, turns int, answer func(turn int, from uint64) string) {
	t.Helper()
	sock, err := SocketPath(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(sock) // stale, from a killed writer
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // the fake proxy's accept loop; then the proxy is gone
		defer ln.Close()
		for turn := 0; turn < turns; turn++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var req feedRequest
			line, _ := bufio.NewReader(c).ReadBytes('\n')
			json.Unmarshal(line, &req)
			c.Write([]byte(answer(turn, req.From)))
			c.Close()
		}
	}()
}

func TestFollowFinished(t *testing.T) {
	path := finishedTest(t, 5)
	r := openTest(t, path)
	defer r.Close()
	var got followed
	end, err := Follow(context.Background(), r, got.options(3))
	if err != nil || end != FollowFinished {
		t.Fatalf("Follow = %v, %v; want finished", end, err)
	}
	got.checkRun(t, 3, 5)
	if got.caughtUp != 1 {
		t.Errorf("caught up %d times, want once", got.caughtUp)
	}
}

// TestFollowLiveWriter follows a real writer's feed while it writes, and
// ends when the writer closes.
func TestFollowLiveWriter(t *testing.T) {
	w := createTest(t, WriterOptions{NoSync: true, CommitEvery: 5 * time.Millisecond})
	write := func(from, to int) {
		for i := from; i <= to; i++ {
			w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
		}
	}
	write(1, 10)
	live, err := DialLive(w.Path(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var got followed
	type result struct {
		end FollowEnd
		err error
	}
	done := make(chan result, 1)
	go func() { // the follower; ends when the writer closes
		end, err := Follow(context.Background(), live, got.options(1))
		done <- result{end, err}
	}()
	write(11, 20)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.err != nil || res.end != FollowFinished {
			t.Fatalf("Follow = %v, %v; want finished", res.end, res.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Follow did not end when the writer closed")
	}
	got.checkRun(t, 1, 20)
}

// TestFollowCutOff plays feeds that cut the follower off, end early or
// keep failing; release lets go of the file as a finishing proxy does.
func TestFollowCutOff(t *testing.T) {
	cut := `{"error":"subscriber too slow"}` + "\n"
	tests := []struct {
		name        string
		turns       int
		answer      func(lines []string, turn int, from uint64, release func()) string
		want        FollowEnd
		wantResumed []uint64
	}{
		{"cut off, resumed, finished", 2, func(lines []string, turn int, from uint64, _ func()) string {
			if turn == 0 {
				return lines[0] + lines[1] + lines[2] + cut
			}
			return lines[0] + strings.Join(lines[from:], "") + `{"end":true}` + "\n"
		}, FollowFinished, []uint64{3}},
		{"ended early, rest from the file", 1, func(lines []string, _ int, _ uint64, release func()) string {
			release()
			return lines[0] + lines[1] + lines[2] // no end marker: the proxy went away
		}, FollowFromFile, nil},
		{"cut again without progress", 3, func(lines []string, turn int, _ uint64, release func()) string {
			if turn == 0 {
				return lines[0] + lines[1] + lines[2] + cut
			}
			release()
			return lines[0] + cut
		}, FollowFromFile, []uint64{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := finishedTest(t, 4)
			lines := feedLines(t, path)
			db := mustBolt(t, path) // held as a running proxy holds it
			var once sync.Once
			release := func() { once.Do(func() { db.Close() }) }
			defer release()
			serveFeed(t, path, tt.turns, func(turn int, from uint64) string {
				return tt.answer(lines, turn, from, release)
			})
			live, err := DialLive(path, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer live.Close()
			var got followed
			end, err := Follow(context.Background(), live, got.options(1))
			if err != nil || end != tt.want {
				t.Fatalf("Follow = %v, %v; want %v", end, err, tt.want)
			}
			got.checkRun(t, 1, 4)
			if !slices.Equal(got.resumed, tt.wantResumed) {
				t.Errorf("resumed at %v, want %v", got.resumed, tt.wantResumed)
			}
		})
	}
}

// TestFollowUnfinished: a proxy killed mid-feed leaves a file without an
// end; what it committed is read from there, and Follow says so.
func TestFollowUnfinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed"+Ext)
	t.Cleanup(func() { checkDB(t, path) })
	killedWriter(t, path, 10)
	lines := feedLines(t, path)
	serveFeed(t, path, 1, func(int, uint64) string { return lines[0] + lines[1] })
	live, err := DialLive(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var got followed
	end, err := Follow(context.Background(), live, got.options(1))
	if err != nil || end != FollowUnfinished {
		t.Fatalf("Follow = %v, %v; want unfinished", end, err)
	}
	got.checkRun(t, 1, uint64(len(lines)-1))
}

// killedWriter runs a writing proxy (this test binary, see writeChild)
// until it has committed at least n records, then SIGKILLs it.
func killedWriter(t *testing.T, path string, n uint64) {
	t.Helper()
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
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGKILL)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if c, _ := strconv.ParseUint(sc.Text(), 10, 64); c >= n {
			return
		}
	}
	t.Fatalf("the writer ended before committing %d records", n)
}

// TestFollowStopped: cancelling the context ends a live follow at once.
func TestFollowStopped(t *testing.T) {
	w := createTest(t, WriterOptions{NoSync: true, CommitEvery: 5 * time.Millisecond})
	w.Chunk(0, StreamAgent, 1, []byte(notif(1)+"\n"))
	live, err := DialLive(w.Path(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var got followed
	opts := got.options(1)
	record := opts.Record
	opts.Record = func(r *Record) error { cancel(); return record(r) }
	end, err := Follow(ctx, live, opts)
	if err != nil || end != FollowStopped {
		t.Fatalf("Follow = %v, %v; want stopped", end, err)
	}
	if len(got.seqs) != 1 || !got.flushed {
		t.Errorf("handed over %v, flushed after: %v; want record 1, flushed", got.seqs, got.flushed)
	}
}

// TestFollowRecordError: an error from Record ends Follow with it.
func TestFollowRecordError(t *testing.T) {
	path := finishedTest(t, 3)
	r := openTest(t, path)
	defer r.Close()
	broken := errors.New("stdout closed")
	_, err := Follow(context.Background(), r, FollowOptions{Record: func(*Record) error { return broken }})
	if !errors.Is(err, broken) {
		t.Fatalf("Follow = %v, want %v", err, broken)
	}
}
