package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// otherUID owns what the tests plant as another local user.
const otherUID = 54321

// shortTempDir is a private temp directory with a short path, so tests
// control how long a capture path is; t.TempDir names carry the test's.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "acps")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// padDir returns a directory under base whose path is exactly n bytes long.
func padDir(t *testing.T, base string, n int) string {
	t.Helper()
	pad := n - len(base) - 1
	if pad < 1 {
		t.Fatalf("%s is longer than %d bytes", base, n)
	}
	dir := filepath.Join(base, strings.Repeat("d", pad))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// feedEnv points the runtime and state directories at fresh private
// temp directories and returns them.
func feedEnv(t *testing.T) (runtime, state string) {
	runtime, state = shortTempDir(t), shortTempDir(t)
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	t.Setenv("XDG_STATE_HOME", state)
	return runtime, state
}

// captureName is 40 bytes, so a capture path's length is its directory's plus 41.
const captureName = "20261121T123456Z-some-agent-12345.acpscope"

// TestLiveFeedPlaces runs a writer and a live reader end to end for short
// and long capture paths, and checks where the socket went: always a
// private directory of this user, the socket itself 0600.
func TestLiveFeedPlaces(t *testing.T) {
	tests := []struct {
		name    string
		dirLen  int // length of the capture directory's path
		dirMode os.FileMode
		noRT    bool   // unset XDG_RUNTIME_DIR
		want    string // where the socket goes: beside, hidden, runtime or state
	}{
		{"short path", 40, 0o700, false, "beside"},
		{"long path", 60, 0o700, false, "hidden"},
		{"very long path", 120, 0o700, false, "runtime"},
		{"very long path, no runtime dir", 120, 0o700, true, "state"},
		{"capture directory open to others", 40, 0o755, false, "runtime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime, state := feedEnv(t)
			if tt.noRT {
				t.Setenv("XDG_RUNTIME_DIR", "")
			}
			dir := padDir(t, shortTempDir(t), tt.dirLen)
			if err := os.Chmod(dir, tt.dirMode); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, captureName)
			t.Cleanup(func() { checkDB(t, path) })
			want := map[string]string{
				"beside":  path + ".sock",
				"hidden":  filepath.Join(dir, ".acpscope-"+pathHash(path)+".sock"),
				"runtime": filepath.Join(runtime, "acpscope", "acpscope-"+pathHash(path)+".sock"),
				"state":   filepath.Join(state, "acpscope", "live", "acpscope-"+pathHash(path)+".sock"),
			}[tt.want]
			w, warns := createWarned(t, path)
			if w.feed == nil || w.feed.sock != want {
				t.Fatalf("no feed socket at %s (warnings %q)", want, warns.all())
			}
			if got := warns.all(); len(got) != 0 {
				t.Errorf("warnings %q", got)
			}
			assertPrivateSocket(t, want)
			w.Chunk(0, StreamClient, 1, []byte(notif(1)+"\n"))
			l, err := DialLive(path, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			waitLast(t, l, 1)
			if in := Stat(path); !in.Live || in.Messages != 1 {
				t.Errorf("Stat of the live capture: live %v, %d messages", in.Live, in.Messages)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			<-l.Done()
			if err := l.Err(); err != nil {
				t.Errorf("feed ended with %v", err)
			}
			if fileExists(want) {
				t.Error("socket left behind")
			}
		})
	}
}

// createWarned creates a capture, collecting its warnings; it is closed
// at cleanup.
func createWarned(t *testing.T, path string) (*Writer, *warnings) {
	t.Helper()
	warns := &warnings{}
	w, err := Create(path, WriterOptions{NoSync: true, CommitEvery: 5 * time.Millisecond, Meta: Meta{Agent: "ours"}, Warn: warns.warn})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w, warns
}

// assertPrivateSocket checks a feed socket is a socket of ours, 0600, in
// a 0700 directory of ours.
func assertPrivateSocket(t *testing.T, sock string) {
	t.Helper()
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want a 0600 socket", sock, fi.Mode())
	}
	if err := checkPrivateDir(filepath.Dir(sock)); err != nil {
		t.Errorf("socket directory: %v", err)
	}
	if fi, err := os.Lstat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %v, %v; want 0700", fi.Mode(), err)
	}
}

// TestFeedSquatted plants what another local user could at the places a
// long capture path's feed might use: a listener posing as the proxy, a
// directory of theirs, one open to all, a symbolic link. None of it may
// stop recording, and no reader may be served by the impostor.
func TestFeedSquatted(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name string
		// plant squats the places of the capture at path; it returns
		// the warning the writer must give ("" for none).
		plant func(t *testing.T, path, runtime, state string) string
		// noFeed: every place is refused; the capture is recorded
		// without a feed and readers are told why.
		noFeed bool
	}{
		{"the old /tmp name taken by a listener", func(t *testing.T, path, _, _ string) string {
			impostor(t, legacySocket(path))
			return ""
		}, false},
		{"the old /tmp name taken by another user's directory", func(t *testing.T, path, _, _ string) string {
			sock := legacySocket(path)
			othersDir(t, sock, 0o755)
			if err := os.WriteFile(filepath.Join(sock, "x"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return ""
		}, false},
		{"runtime directory of another user", func(t *testing.T, path, runtime, _ string) string {
			dir := othersDir(t, filepath.Join(runtime, "acpscope"), 0o700)
			impostor(t, filepath.Join(dir, "acpscope-"+pathHash(path)+".sock"))
			return "belongs to uid 54321"
		}, false},
		{"runtime directory open to all", func(t *testing.T, path, runtime, _ string) string {
			dir := filepath.Join(runtime, "acpscope")
			if err := os.Mkdir(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, 0o777) // past the umask
			impostor(t, filepath.Join(dir, "acpscope-"+pathHash(path)+".sock"))
			return "is open to others (mode 0777)"
		}, false},
		{"runtime directory a symbolic link", func(t *testing.T, path, runtime, _ string) string {
			elsewhere := shortTempDir(t)
			impostor(t, filepath.Join(elsewhere, "acpscope-"+pathHash(path)+".sock"))
			if err := os.Symlink(elsewhere, filepath.Join(runtime, "acpscope")); err != nil {
				t.Fatal(err)
			}
			return "is a symbolic link"
		}, false},
		{"every place another user's", func(t *testing.T, path, runtime, state string) string {
			impostor(t, filepath.Join(othersDir(t, filepath.Join(runtime, "acpscope"), 0o755), "acpscope-"+pathHash(path)+".sock"))
			impostor(t, filepath.Join(othersDir(t, filepath.Join(state, "acpscope", "live"), 0o755), "acpscope-"+pathHash(path)+".sock"))
			return "belongs to uid 54321"
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime, state := feedEnv(t)
			path := filepath.Join(padDir(t, shortTempDir(t), 120), captureName)
			t.Cleanup(func() { checkDB(t, path) })
			wantWarn := tt.plant(t, path, runtime, state)
			w, warns := createWarned(t, path)
			switch got := strings.Join(warns.all(), "\n"); {
			case wantWarn == "" && got != "":
				t.Errorf("warnings %q", got)
			case !strings.Contains(got, wantWarn) || tt.noFeed != strings.Contains(got, "has no live feed"):
				t.Errorf("warnings %q, want one saying %q (no feed: %v)", got, wantWarn, tt.noFeed)
			}
			for i := 1; i <= 3; i++ {
				w.Chunk(0, StreamClient, int64(i), []byte(notif(i)+"\n"))
			}
			if tt.noFeed {
				if _, err := DialLive(path, 1); err == nil || !strings.Contains(err.Error(), wantWarn) {
					t.Errorf("DialLive = %v, want an error saying %q", err, wantWarn)
				}
			} else {
				assertPrivateSocket(t, w.feed.sock)
				if filepath.Dir(w.feed.sock) == os.TempDir() || wantWarn != "" && strings.HasPrefix(w.feed.sock, runtime) {
					t.Errorf("feed socket at the squatted %s", w.feed.sock)
				}
				l, err := DialLive(path, 1)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				waitLast(t, l, 3)
				if m := l.Meta(); m.Agent != "ours" {
					t.Errorf("the reader was served by %q", m.Agent)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r := openTest(t, path)
			if body, err := r.Body(3); err != nil || string(body) != notif(3) {
				t.Errorf("recorded record 3 = %q, %v", body, err)
			}
		})
	}
}

// legacySocket is where feeds of long capture paths used to listen: a
// name anyone could predict, in the shared temp directory.
func legacySocket(path string) string {
	abs, _ := filepath.Abs(path)
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.TempDir(), "acpscope-"+hex.EncodeToString(sum[:8])+".sock")
}

// othersDir makes dir (and its parents) and gives it to another user.
func othersDir(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, mode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// impostor listens at sock posing as a proxy's feed, and fails the test
// if any reader connects to it.
func impostor(t *testing.T, sock string) {
	t.Helper()
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			served.Add(1)
			c.Write([]byte(`{"meta":{"formatVersion":3,"agent":"impostor"},"last":0}` + "\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		if n := served.Load(); n != 0 {
			t.Errorf("the impostor at %s was connected to %d times", sock, n)
		}
	})
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("plays another local user with chown and setuid, which needs root")
	}
}

// dialChildEnv makes the test binary dial a socket and print the result
// (see TestFeedClosedToOthers).
const dialChildEnv = "ACPSCOPE_CAPTURE_TEST_DIAL"

func dialChild(sock string) int {
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Println(err)
		return 0
	}
	c.Close()
	fmt.Println("connected")
	return 0
}

// TestFeedClosedToOthers dials a running proxy's feed as another user:
// the socket's private directory keeps them out, and so does the
// socket's own mode should the directory be opened.
func TestFeedClosedToOthers(t *testing.T) {
	needRoot(t)
	feedEnv(t)
	bin := othersCopyOfTest(t)
	w, _ := createWarned(t, filepath.Join(shortTempDir(t), "c"+Ext))
	sock := w.feed.sock
	tests := []struct {
		name              string
		dirMode, sockMode os.FileMode
		want              string
	}{
		{"as served", 0o700, 0o600, "permission denied"},
		{"directory opened", 0o711, 0o600, "permission denied"},
		{"both opened (the test's control)", 0o711, 0o666, "connected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.Chmod(filepath.Dir(sock), tt.dirMode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(sock, tt.sockMode); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(), dialChildEnv+"="+sock)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("dialling as uid %d: %v: %s", otherUID, err, out)
			}
			if got := strings.TrimSpace(string(out)); !strings.Contains(got, tt.want) {
				t.Errorf("uid %d dialling the feed: %q, want %q", otherUID, got, tt.want)
			}
		})
	}
	os.Chmod(filepath.Dir(sock), 0o700)
}

// othersCopyOfTest copies the test binary where another user can run it.
func othersCopyOfTest(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := shortTempDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, "capture.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestCheckPrivateDir checks each way a directory fails to be private.
func TestCheckPrivateDir(t *testing.T) {
	base := shortTempDir(t)
	mk := func(name string, mode os.FileMode) string {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, mode)
		return dir
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	link := filepath.Join(base, "link")
	os.Symlink(mk("target", 0o700), link)
	tests := []struct {
		name, dir, errHas string
	}{
		{"private", mk("private", 0o700), ""},
		{"group readable", mk("group", 0o750), "mode 0750"},
		{"world writable", mk("world", 0o777), "mode 0777"},
		{"symbolic link", link, "symbolic link"},
		{"file", file, "not a directory"},
	}
	if os.Geteuid() == 0 {
		dir := mk("others", 0o700)
		os.Chown(dir, otherUID, otherUID)
		tests = append(tests, struct{ name, dir, errHas string }{"another user's", dir, "belongs to uid 54321"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPrivateDir(tt.dir)
			switch {
			case tt.errHas == "" && err != nil:
				t.Errorf("checkPrivateDir = %v", err)
			case tt.errHas != "" && (!errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), tt.errHas)):
				t.Errorf("checkPrivateDir = %v, want ErrNotPrivate saying %q", err, tt.errHas)
			}
		})
	}
}

// TestSweepSockets: sockets nobody answers on go, in the capture
// directory and in acpscope's own socket directories; a live feed's
// socket, and whatever is not a feed socket, stay.
func TestSweepSockets(t *testing.T) {
	runtime, state := feedEnv(t)
	capDir := shortTempDir(t)
	stale := func(sock string) string {
		os.MkdirAll(filepath.Dir(sock), 0o700)
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		return sock
	}
	live := filepath.Join(capDir, "live"+Ext)
	w, _ := createWarned(t, live)
	gone := []string{
		stale(filepath.Join(capDir, "old"+Ext+".sock")),
		stale(filepath.Join(capDir, ".acpscope-0123456789abcdef.sock")),
		stale(filepath.Join(runtime, "acpscope", "acpscope-0123456789abcdef.sock")),
		stale(filepath.Join(state, "acpscope", "live", "acpscope-0123456789abcdef.sock")),
	}
	kept := []string{w.feed.sock, stale(filepath.Join(capDir, "other.sock")), filepath.Join(capDir, "acpscope-file.sock")}
	os.WriteFile(kept[2], nil, 0o600)
	if n := SweepSockets(capDir); n != len(gone) {
		t.Errorf("SweepSockets removed %d sockets, want %d", n, len(gone))
	}
	for _, sock := range gone {
		if fileExists(sock) {
			t.Errorf("stale %s left", sock)
		}
	}
	for _, sock := range kept {
		if !fileExists(sock) {
			t.Errorf("%s removed", sock)
		}
	}
}
