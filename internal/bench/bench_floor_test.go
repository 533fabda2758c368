package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// TestFloorRecordsWhatItForwards runs setup (f)'s program around the
// test agent's burst: the client must get every line, the floor's file
// must begin with exactly those bytes, and the loss it reports must be
// what its queue's bound let through: nothing with capture's bound,
// every line with no room at all.
func TestFloorRecordsWhatItForwards(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with the go command")
	}
	floor, err := buildProgram(t.Context(), t.TempDir(), "floor", floorSource)
	if err != nil {
		t.Fatal(err)
	}
	const count, size = 300, 100_000 // 30 MB: many chunks, lines across them
	for _, tc := range []struct {
		name            string
		queue           string // ACPSCOPE_BENCH_FLOOR_QUEUE; "" for capture's 64 MiB
		lost, lostBytes int64
	}{
		{"room for all", "", 0, 0},
		{"no room", "0", count, count * size},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir() + "/floor"
			cmd := exec.Command(floor, agentArgv("burst", fmt.Sprint(count), fmt.Sprint(size), "0")...)
			cmd.Env = append(os.Environ(), "ACPSCOPE_BENCH_FLOOR="+path)
			if tc.queue != "" {
				cmd.Env = append(cmd.Env, "ACPSCOPE_BENCH_FLOOR_QUEUE="+tc.queue)
			}
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stdin.Close()
			got, err := io.ReadAll(stdout)
			if werr := cmd.Wait(); err != nil || werr != nil {
				t.Fatalf("read %v, exit %v", err, werr)
			}
			if n := bytes.Count(got, []byte{'\n'}); n != count || len(got) != count*size {
				t.Fatalf("the client got %d lines, %d bytes; want %d, %d", n, len(got), count, count*size)
			}
			lost, lostBytes, note := readFloorLoss(path)
			if lost != tc.lost || lostBytes != tc.lostBytes || note != "" {
				t.Errorf("floor lost %d lines, %d bytes (%s); want %d, %d", lost, lostBytes, note, tc.lost, tc.lostBytes)
			}
			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if kept := int64(len(got)) - lostBytes; int64(len(file)) < kept || !bytes.Equal(file[:kept], got[:kept]) {
				t.Errorf("the floor's file does not begin with the %d bytes it kept (file %d bytes)", kept, len(file))
			}
		})
	}
}
