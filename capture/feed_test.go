package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/protocol"
)

func notif(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","n":%d}}`, i)
}

// waitLast waits until src holds seq last.
func waitLast(t *testing.T, l *Live, last uint64) {
	t.Helper()
	deadline := time.After(waitLimit)
	for l.Last() < last {
		select {
		case _, ok := <-l.Updates():
			if !ok && l.Last() < last {
				t.Fatalf("feed ended at %d before %d: %v", l.Last(), last, l.Err())
			}
		case <-deadline:
			t.Fatalf("still at %d after %v waiting for %d", l.Last(), waitLimit, last)
		}
	}
}

func TestLiveFeedTwoSubscribers(t *testing.T) {
	w := createTest(t, WriterOptions{NoSync: true, CommitEvery: 5 * time.Millisecond})
	write := func(from, to int) {
		for i := from; i <= to; i++ {
			w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
		}
	}
	write(1, 10)
	if _, err := Open(w.Path()); !errors.Is(err, ErrLive) {
		t.Errorf("Open of a live capture = %v, want ErrLive", err)
	} else if !strings.Contains(err.Error(), "acpscope tail") {
		t.Errorf("ErrLive without advice: %v", err)
	}
	a, err := DialLive(w.Path(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	waitLast(t, a, 10)
	write(11, 20)
	b, err := DialLive(w.Path(), 15)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	waitLast(t, b, 20)
	// A third subscriber learns where the capture stood when it joined,
	// before any of its backlog arrives: tail -n counts back from there.
	c, err := DialLive(w.Path(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LastAtOpen(); got != 20 {
		t.Errorf("LastAtOpen() = %d, want 20", got)
	}
	c.Close()
	write(21, 30)
	w.UpdateMeta(func(m *Meta) { m.Agent = "demo-agent" })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		l     *Live
		first uint64
	}{{"from 1", a, 1}, {"from 15", b, 15}} {
		t.Run(tc.name, func(t *testing.T) {
			select {
			case <-tc.l.Done():
			case <-time.After(waitLimit):
				t.Fatalf("feed did not end within %v", waitLimit)
			}
			if err := tc.l.Err(); err != nil {
				t.Fatalf("Err() = %v after a clean end", err)
			}
			if tc.l.Last() != 30 {
				t.Fatalf("Last() = %d", tc.l.Last())
			}
			var seqs []uint64
			tc.l.Scan(1, func(r *Record) bool { seqs = append(seqs, r.Seq); return true })
			if len(seqs) != int(31-tc.first) || seqs[0] != tc.first {
				t.Fatalf("scanned %d records from %v", len(seqs), seqs[:1])
			}
			for seq := tc.first; seq <= 30; seq++ {
				body, err := tc.l.Body(seq)
				if err != nil || string(body) != notif(int(seq)) {
					t.Fatalf("Body(%d) = %q, %v", seq, body, err)
				}
			}
			if m := tc.l.Meta(); m.End.IsZero() || m.Agent != "demo-agent" {
				t.Errorf("final meta = %+v", m)
			}
		})
	}
	if _, err := os.Stat(socketPath(t, w.Path())); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// waitSubscribers waits until the writer serves n feed connections.
func waitSubscribers(t *testing.T, w *Writer, n int) {
	t.Helper()
	count := func() int {
		w.feed.mu.Lock()
		defer w.feed.mu.Unlock()
		return len(w.feed.conns)
	}
	deadline := time.Now().Add(waitLimit)
	for count() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the feed serves %d subscribers after %v, want %d (feedWriteTimeout %v)", count(), waitLimit, n, feedWriteTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSlowSubscriberCutOff(t *testing.T) {
	old := feedWriteTimeout
	feedWriteTimeout = 200 * time.Millisecond
	defer func() { feedWriteTimeout = old }()
	w := createTest(t, WriterOptions{NoSync: true, CommitEvery: 5 * time.Millisecond})
	c, err := net.Dial("unix", socketPath(t, w.Path()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("{\"from\":1}\n"))
	waitSubscribers(t, w, 1) // served before there is anything to block on
	big := bytes.Repeat([]byte("x"), 1<<20)
	big[len(big)-1] = '\n'
	for i := 0; i < 8; i++ { // 8 MiB: far more than socket buffers hold
		w.Chunk(0, StreamAgent, int64(i), big)
	}
	waitCommitted(t, w, 8)
	if st := w.Stats(); st.Loss.Messages != 0 {
		t.Fatalf("the writer lost %+v with a stuck subscriber", st.Loss)
	}
	waitSubscribers(t, w, 0) // the server gives up on the stuck one
	// Now read: what was sent, then the end of the connection.
	c.SetReadDeadline(time.Now().Add(waitLimit))
	br := bufio.NewReaderSize(c, 4<<20)
	var sawEOF bool
	for {
		_, err := br.ReadBytes('\n')
		if err != nil {
			sawEOF = !errors.Is(err, os.ErrDeadlineExceeded)
			break
		}
	}
	if !sawEOF {
		t.Error("a stuck subscriber was not cut off")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestStaleSocketRemoved(t *testing.T) {
	dir := t.TempDir()
	path := dirCapture(t, dir, "stale.acpscope")
	sock := socketPath(t, path)
	// A socket file nobody listens on, as a SIGKILLed proxy leaves it.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("setup: %v", err)
	}
	infos, err := List(dir)
	if err != nil || len(infos) != 1 {
		t.Fatalf("List = %v, %v", infos, err)
	}
	if infos[0].Live || infos[0].Err != nil {
		t.Errorf("stale capture listed as live=%v err=%v", infos[0].Live, infos[0].Err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("stale socket not removed by List: %v", err)
	}
}

// dirCapture writes a small finished capture named name in dir.
func dirCapture(t *testing.T, dir, name string) string {
	t.Helper()
	path := dir + "/" + name
	t.Cleanup(func() { checkDB(t, path) })
	w, err := Create(path, WriterOptions{NoSync: true, NoFeed: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Chunk(0, StreamClient, 1, []byte(notif(1)+"\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLiveFeedCut checks what Live says when the proxy dies mid-feed or
// the server refuses it.
func TestLiveFeedCut(t *testing.T) {
	tests := []struct {
		name   string
		answer string // what the fake proxy sends before hanging up
		dialOK bool
		errHas string
	}{
		{"crash", `{"meta":{"formatVersion":1,"pid":7},"last":1}` + "\n" + AppendJSONLString(1), true, "without finishing"},
		{"too slow", `{"meta":{"formatVersion":1},"last":0}` + "\n" + `{"error":"subscriber too slow"}` + "\n", true, "subscriber too slow"},
		{"refused", `{"error":"bad request"}` + "\n", false, "bad request"},
		{"garbage", `{"meta":{"formatVersion":1},"last":0}` + "\n" + "{nope\n", true, "bad line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fakeFeed(t, tt.answer, true)
			l, err := DialLive(path, 1)
			if !tt.dialOK {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("DialLive = %v, want an error with %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			select {
			case <-l.Done():
			case <-time.After(waitLimit):
				t.Fatalf("feed did not end within %v", waitLimit)
			}
			if err := l.Err(); err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("Err() = %v, want %q", err, tt.errHas)
			}
			for range l.Updates() { // a pending signal, then closed
			}
		})
	}
}

// fakeFeed plays a proxy's live feed for one subscriber: it reads the
// request, sends answer, then hangs up or (hangUp false) holds the
// connection open until the test ends. It returns the capture path whose
// socket it listens on.
func fakeFeed(t *testing.T, answer string, hangUp bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake"+Ext)
	ln, err := net.Listen("unix", socketPath(t, path))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	t.Cleanup(func() { close(release); ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		bufio.NewReader(c).ReadBytes('\n')
		c.Write([]byte(answer))
		if !hangUp {
			<-release
		}
	}()
	return path
}

// AppendJSONLString is one record line for fake feeds.
func AppendJSONLString(seq uint64) string {
	r := Record{Msg: protocol.Msg{Seq: seq, Time: 1, Dir: 2, Kind: 3, Body: []byte(`{"jsonrpc":"2.0","method":"x"}`)}}
	return string(AppendJSONL(nil, &r)) + "\n"
}

// TestWaitBacklog checks that a one-pass reader gets the whole backlog
// or a clear error: a feed that stalls or dies before the records the
// capture held at open have arrived must not pass for a complete one.
func TestWaitBacklog(t *testing.T) {
	meta := `{"meta":{"formatVersion":1},"last":3}` + "\n"
	tests := []struct {
		name   string
		answer string // sent after the request
		hangUp bool   // close the connection after answering
		errHas string // "" for success
	}{
		{"whole backlog", meta + AppendJSONLString(1) + AppendJSONLString(2) + AppendJSONLString(3), false, ""},
		{"empty capture", `{"meta":{"formatVersion":1},"last":0}` + "\n", false, ""},
		{"stalls", meta + AppendJSONLString(1), false, "got records up to 1 of the 3 it held, then nothing for"},
		{"dies", meta + AppendJSONLString(1) + AppendJSONLString(2), true, "(2 of its 3 records arrived)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fakeFeed(t, tt.answer, tt.hangUp)
			l, err := DialLive(path, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			err = l.WaitBacklog(300 * time.Millisecond)
			switch {
			case tt.errHas == "" && err != nil:
				t.Fatalf("WaitBacklog = %v", err)
			case tt.errHas == "" && l.Last() < l.LastAtOpen():
				t.Fatalf("WaitBacklog returned at %d of %d", l.Last(), l.LastAtOpen())
			case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)):
				t.Fatalf("WaitBacklog = %v, want an error with %q", err, tt.errHas)
			}
		})
	}
}

// TestLiveDiscard: records a reader is done with are let go; those after
// them, and records still arriving, stay readable.
func TestLiveDiscard(t *testing.T) {
	w := createTest(t, WriterOptions{NoSync: true, CommitEvery: 5 * time.Millisecond})
	for i := 1; i <= 10; i++ {
		w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
	}
	l, err := DialLive(w.Path(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	waitLast(t, l, 10)
	l.Discard(8)
	l.Discard(3) // going back changes nothing
	for seq := uint64(1); seq <= 10; seq++ {
		_, rerr := l.Record(seq)
		body, berr := l.Body(seq)
		if seq < 8 {
			if !errors.Is(rerr, ErrNoRecord) || !errors.Is(berr, ErrNoRecord) {
				t.Errorf("#%d after Discard(8): Record %v, Body %v; want ErrNoRecord", seq, rerr, berr)
			}
		} else if rerr != nil || string(body) != notif(int(seq)) {
			t.Errorf("#%d after Discard(8): %v, body %q", seq, rerr, body)
		}
	}
	w.Chunk(0, StreamAgent, 11, []byte(notif(11)+"\n"))
	waitLast(t, l, 11)
	if body, err := l.Body(11); err != nil || string(body) != notif(11) {
		t.Errorf("#11 arriving after Discard: %v, body %q", err, body)
	}
	l.Discard(100) // past the end: everything received goes
	if _, err := l.Record(11); !errors.Is(err, ErrNoRecord) || l.Last() != 11 {
		t.Errorf("after Discard(100): Record(11) = %v, Last %d", err, l.Last())
	}
}

// TestLiveHoldLimit: with a hold limit the Live stops reading its feed
// while it holds more than the limit, and reads on as Discard makes room,
// so a reader slower than the feed gets everything in bounded memory.
func TestLiveHoldLimit(t *testing.T) {
	w := createTest(t, WriterOptions{NoSync: true, CommitEvery: 5 * time.Millisecond})
	const n = 200
	w.Chunk(0, StreamAgent, 1, []byte(notif(1)+"\n"))
	l, err := DialLive(w.Path(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.SetHoldLimit(4 << 10) // a few dozen records
	waitLast(t, l, 1)
	// The rest are written only now, so the feed cannot have read them
	// before the limit was set, however slow the machine.
	for i := 2; i <= n; i++ {
		w.Chunk(0, StreamAgent, int64(i), []byte(notif(i)+"\n"))
	}
	time.Sleep(100 * time.Millisecond) // time enough to read all 200 without the limit
	if got := l.Last(); got >= n {
		t.Fatalf("read %d records while holding them all; the limit should have stopped it", got)
	}
	for next := uint64(1); next <= n; {
		waitLast(t, l, next)
		for ; next <= l.Last(); next++ {
			if body, err := l.Body(next); err != nil || string(body) != notif(int(next)) {
				t.Fatalf("#%d: %v, body %q", next, err, body)
			}
		}
		l.Discard(next)
	}
}

// TestLiveFarSeqs: a record far past those held costs no memory for the
// records skipped when none are held, and ends the feed with an error
// when the hole it would open is longer than any failed commit leaves.
func TestLiveFarSeqs(t *testing.T) {
	far := strings.Replace(AppendJSONLString(1), `"seq":1,`, `"seq":20000000,`, 1)
	tests := []struct {
		name, feed string
		held       int // record slots held
		errHas     string
	}{
		{"far first record", far, 1, "without finishing"},
		{"short hole", AppendJSONLString(1) + strings.Replace(AppendJSONLString(1), `"seq":1,`, `"seq":5,`, 1), 5, "without finishing"},
		{"hole too long", AppendJSONLString(1) + far, 1, "more than 65536 records missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, server := net.Pipe()
			l := newLive("far", client, 1)
			go func() {
				server.Write([]byte(tt.feed))
				server.Close()
			}()
			go l.read()
			<-l.Done()
			if err := l.Err(); err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("Err() = %v, want %q", err, tt.errHas)
			}
			if len(l.recs) != tt.held {
				t.Errorf("%d record slots held, want %d", len(l.recs), tt.held)
			}
		})
	}
}
