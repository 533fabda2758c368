package bench

import (
	"bufio"
	"context"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// floorSource is the program of setup (f), in floor/: the minimal
// forwarder writing down all it forwards as cheaply as a durable
// recording can (see floor/main.go). The bench builds it from this copy,
// as it builds the forwarder, so `acpscope bench` needs no source tree.
//
//go:embed floor/main.go floor/loss.go floor/recorder.go floor/background_linux.go floor/background_other.go
var floorSource embed.FS

// buildFloor writes floorSource into its own module and builds it.
func buildFloor(ctx context.Context, dir string) (string, error) {
	files := map[string]string{}
	entries, err := floorSource.ReadDir("floor")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := floorSource.ReadFile("floor/" + e.Name())
		if err != nil {
			return "", err
		}
		files[e.Name()] = string(b)
	}
	return buildProgram(ctx, dir, "floor", files)
}

// floorCommand runs the floor around agent, writing path and held to
// capture's default queue and commit bounds, with commits every
// commitEvery (capture's default when 0, as for (d)).
func floorCommand(bin, path string, commitEvery time.Duration, agent []string) *exec.Cmd {
	if commitEvery == 0 {
		commitEvery = capture.DefaultCommitEvery
	}
	args := []string{"-file", path,
		"-queue", fmt.Sprint(capture.DefaultQueueBytes),
		"-commit-bytes", fmt.Sprint(capture.DefaultCommitBytes),
		"-commit-every", commitEvery.String(), "--"}
	return exec.Command(bin, append(args, agent...)...)
}

// readFloorLoss reads what setup (f) wrote at exit: the lines and bytes
// its queue had no room for, and the first write or sync that failed. It
// has no spool, so nothing waits behind the wire (backlog 0).
func readFloorLoss(path string) (lines, bytes, backlog int64, note string) {
	b, err := os.ReadFile(path + ".loss")
	if err != nil {
		return -1, 0, 0, "floor's loss unreadable: " + err.Error()
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	if !sc.Scan() {
		return -1, 0, 0, fmt.Sprintf("floor's loss unreadable: %q", b)
	}
	if _, err := fmt.Sscan(sc.Text(), &lines, &bytes); err != nil {
		return -1, 0, 0, fmt.Sprintf("floor's loss unreadable: %q: %v", b, err)
	}
	if sc.Scan() {
		note = "writing the floor's file failed: " + strings.TrimPrefix(sc.Text(), "error: ")
	}
	return lines, bytes, 0, note
}
