package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// TestFloorRecordsWhatItForwards runs setup (f)'s program around the
// test agent's burst: the client must get every line, the floor's file
// must begin with exactly the bytes it kept, and the loss it reports
// must be what its queue's bound let through: nothing with capture's
// bound, every line with no room at all (and then an empty file). Under
// a file size limit the write that fails is named, not hidden.
func TestFloorRecordsWhatItForwards(t *testing.T) {
	floor := floorForTest(t)
	const count, size = 300, 100_000 // 30 MB: many chunks, lines across them
	for _, tc := range []struct {
		name            string
		queue           string // -queue; "" keeps capture's bound
		ulimitBlocks    int    // the shell's file size limit (512 B blocks); 0: none
		lost, lostBytes int64
		note            string // in the loss's note
	}{
		{name: "room for all"},
		{name: "no room", queue: "0", lost: count, lostBytes: count * size},
		{name: "file size limit", ulimitBlocks: 20000, note: "file too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir() + "/floor"
			cmd := floorCommand(floor, path, 0, agentArgv("burst", fmt.Sprint(count), fmt.Sprint(size), "0"))
			if tc.queue != "" { // after capture's bound, so it wins
				dash := slices.Index(cmd.Args, "--")
				cmd.Args = slices.Insert(cmd.Args, dash, "-queue", tc.queue)
			}
			if tc.ulimitBlocks > 0 {
				cmd = exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -f %d && exec "$@"`, tc.ulimitBlocks), "sh", cmd.Path}, cmd.Args[1:]...)...)
			}
			got := runFloor(t, cmd, 0)
			if n := bytes.Count(got, []byte{'\n'}); n != count || len(got) != count*size {
				t.Fatalf("the client got %d lines, %d bytes; want %d, %d", n, len(got), count, count*size)
			}
			lost, lostBytes, _, note := readFloorLoss(path)
			if lost != tc.lost || lostBytes != tc.lostBytes || !strings.Contains(note, tc.note) || tc.note == "" && note != "" {
				t.Errorf("floor lost %d lines, %d bytes (%q); want %d, %d (%q)", lost, lostBytes, note, tc.lost, tc.lostBytes, tc.note)
			}
			if tc.note != "" {
				return
			}
			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			kept := int64(len(got)) - lostBytes
			if int64(len(file)) < kept || !bytes.Equal(file[:kept], got[:kept]) || bytes.ContainsFunc(file[kept:], func(r rune) bool { return r != 0 }) {
				t.Errorf("the floor's file (%d bytes) is not the %d bytes it kept, then nothing", len(file), kept)
			}
		})
	}
}

// TestFloorPassesTheExitCode: the floor leaves with the agent's exit
// code, as the forwarder does.
func TestFloorPassesTheExitCode(t *testing.T) {
	floor := floorForTest(t)
	runFloor(t, floorCommand(floor, t.TempDir()+"/floor", 0, []string{"sh", "-c", "echo hi; exit 3"}), 3)
}

// floorForTest builds (f)'s program for t.
func floorForTest(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a program with the go command")
	}
	floor, err := buildFloor(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return floor
}

// runFloor runs cmd with its stdin closed, and returns what it wrote to
// stdout once it has exited with code want.
func runFloor(t *testing.T, cmd *exec.Cmd, want int) []byte {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	got, err := io.ReadAll(stdout)
	werr := cmd.Wait()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(werr, &ee) {
		code = ee.ExitCode()
	} else if werr != nil {
		t.Fatal(werr)
	}
	if err != nil || code != want {
		t.Fatalf("read %v, exit code %d (want %d); stderr: %s", err, code, want, stderr.String())
	}
	return got
}

// TestFloorCommandHoldsCapturesBounds: (f) is run with capture's queue
// and commit bounds, and with --commit-every when one is given, so it
// syncs as often as (d) commits.
func TestFloorCommandHoldsCapturesBounds(t *testing.T) {
	for _, tc := range []struct {
		every time.Duration
		want  string
	}{
		{0, capture.DefaultCommitEvery.String()},
		{200 * time.Millisecond, "200ms"},
	} {
		args := floorCommand("floor", "/x", tc.every, []string{"agent", "-v"}).Args
		want := []string{"floor", "-file", "/x", "-queue", fmt.Sprint(capture.DefaultQueueBytes),
			"-commit-bytes", fmt.Sprint(capture.DefaultCommitBytes), "-commit-every", tc.want, "--", "agent", "-v"}
		if !slices.Equal(args, want) {
			t.Errorf("commit every %v: %q, want %q", tc.every, args, want)
		}
	}
}

// TestCommitNote: a recording setup's name says its commit window only
// when it is not capture's default.
func TestCommitNote(t *testing.T) {
	for _, tc := range []struct {
		every time.Duration
		want  string
	}{
		{0, ""},
		{capture.DefaultCommitEvery, ""},
		{200 * time.Millisecond, ", syncs every 200ms"},
	} {
		if got := (Config{CommitEvery: tc.every}).commitNote("syncs"); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.every, got, tc.want)
		}
	}
}
