// Command floor is setup (f) of acpscope bench: the minimal forwarder of
// setup (b) that also writes down everything it forwards, and nothing
// more. Each chunk read is copied into a queue of capture's default size,
// then forwarded; one goroutine, at capture's low priority, writes the
// chunks to a file grown ahead of them and syncs it with fdatasync once
// capture's default commit bytes wait or the first has waited its commit
// interval. There is no framing, validation, index, database or spool.
// It shows what writing the bytes down costs a plain forwarder on this
// machine; it is no lower bound on capture, whose forwarding outruns
// io.Copy's and whose spool rides out a burst. What the queue has no
// room for is dropped and counted, in lines as capture counts them.
//
//	floor -file PATH -queue BYTES -commit-bytes BYTES -commit-every DURATION -- AGENT [ARGS]
//
// At exit it writes PATH.loss: the lines and bytes dropped, and a line
// naming the first write or sync that failed, if one did. The bench
// builds it from this source with the go command, in a module of its
// own, as it builds the forwarder.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

func main() {
	fs := flag.NewFlagSet("floor", flag.ExitOnError)
	var cfg config
	fs.StringVar(&cfg.path, "file", "", "the file to write")
	fs.Int64Var(&cfg.queueBytes, "queue", -1, "the queue's bound in bytes")
	fs.Int64Var(&cfg.commitBytes, "commit-bytes", 0, "sync after this many bytes")
	fs.DurationVar(&cfg.commitEvery, "commit-every", 0, "sync at least this often while writing")
	fs.Parse(os.Args[1:])
	if cfg.path == "" || cfg.queueBytes < 0 || cfg.commitBytes <= 0 || cfg.commitEvery <= 0 || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "floor: -file, -queue, -commit-bytes, -commit-every and an agent command are needed")
		os.Exit(2)
	}
	os.Exit(run(cfg, fs.Args()))
}

// run forwards between this process's stdio and the agent, recording,
// and returns the exit code to leave with: the agent's.
func run(cfg config, agent []string) int {
	rec, err := newRecorder(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		return 126
	}
	cmd := exec.Command(agent[0], agent[1:]...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		return 127
	}
	var up, down lineLoss
	// The client's side is read until the client closes it or the agent
	// is gone, as in the forwarder: not waited for.
	go pump(in, os.Stdin, rec, &up)
	pump(os.Stdout, out, rec, &down)
	werr := cmd.Wait()
	rec.stop()
	if err := rec.writeLoss(&up, &down); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// pump copies src to dst, offering each chunk to rec before it goes on,
// as capture's tap does, so what is recorded never trails what it
// provoked.
func pump(dst io.WriteCloser, src io.Reader, rec *recorder, l *lineLoss) {
	defer dst.Close()
	buf := make([]byte, 32<<10) // io.Copy's, as in the forwarder
	for {
		n, err := src.Read(buf)
		if n > 0 {
			rec.offer(buf[:n], l)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			l.end()
			return
		}
	}
}

// config is what the bench passes on the command line: capture's own
// bounds, so the floor is held to them.
type config struct {
	path                    string
	queueBytes, commitBytes int64
	commitEvery             time.Duration
}
