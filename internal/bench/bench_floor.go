package bench

import (
	"fmt"
	"os"
	"strings"
)

// floorSource is setup (f): the minimal forwarder that also writes down
// everything it forwards, as cheaply as a recording can. Each chunk read
// is copied and offered to a queue bounded as capture's is (64 MiB); one
// goroutine writes the chunks to a file grown ahead of them and syncs it
// at capture's default commit bounds (4 MiB or 50 ms). There is no
// framing, validation, index or database, so what (f) cannot keep up with
// on a machine, no capture can: it is the floor under (d). What the queue
// has no room for is dropped and counted, in lines as capture counts
// them, and written to $ACPSCOPE_BENCH_FLOOR.loss at exit.
// $ACPSCOPE_BENCH_FLOOR_QUEUE, when set, is the queue's bound in bytes
// instead, for the tests of that count.
const floorSource = `package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"time"
)

const (
	commitBytes = 4 << 20
	commitEvery = 50 * time.Millisecond
	growBytes   = 64 << 20
	pollEvery   = 2 * time.Millisecond // while busy, as capture's builder polls
	pollIdle    = 50
)

var (
	queueBytes int64 = 64 << 20
	queue            = make(chan []byte, 1<<16)
	queued           atomic.Int64
	spare            = make(chan []byte, 256)
)

// loss is one direction's. Its copier alone changes it; main reads the
// counts at exit, while the client's side may still be being read.
type loss struct {
	damaged      bool // the line in progress lost bytes
	lines, bytes atomic.Int64
}

func (l *loss) dropped(b []byte) {
	l.bytes.Add(int64(len(b)))
	l.lines.Add(int64(bytes.Count(b, []byte{'\n'})))
	l.damaged = b[len(b)-1] != '\n'
}

func (l *loss) kept(b []byte) {
	if l.damaged && bytes.IndexByte(b, '\n') >= 0 {
		l.lines.Add(1)
		l.damaged = false
	}
}

func offer(b []byte, l *loss) {
	n := int64(len(b))
	if queued.Add(n) > queueBytes {
		queued.Add(-n)
		l.dropped(b)
		return
	}
	var c []byte
	select {
	case c = <-spare:
	default:
	}
	c = append(c[:0], b...)
	select {
	case queue <- c:
		l.kept(b)
	default:
		queued.Add(-n)
		l.dropped(b)
	}
}

func pump(dst io.WriteCloser, src io.Reader, l *loss) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
			offer(buf[:n], l)
		}
		if err != nil {
			break
		}
	}
	if l.damaged {
		l.lines.Add(1)
	}
	dst.Close()
}

// write writes the queue's chunks until stop is closed, then what is
// left in the queue.
func write(f *os.File, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	var off, size, pending int64
	commit := func() {
		if pending > 0 {
			f.Sync()
			pending = 0
		}
	}
	tick := time.NewTicker(commitEvery)
	for idle := 0; ; {
		var c []byte
		if idle < pollIdle {
			select {
			case c = <-queue:
			case <-tick.C:
				commit()
				continue
			case <-stop:
				idle = pollIdle
				continue
			default:
				time.Sleep(pollEvery)
				idle++
				continue
			}
		} else {
			select {
			case c = <-queue:
			case <-tick.C:
				commit()
				continue
			case <-stop:
				select {
				case c = <-queue:
				default:
					commit()
					return
				}
			}
		}
		idle = 0
		n := int64(len(c))
		if off+n > size {
			size = off + n + growBytes
			f.Truncate(size)
		}
		f.WriteAt(c, off)
		off += n
		pending += n
		queued.Add(-n)
		select {
		case spare <- c:
		default:
		}
		if pending >= commitBytes {
			commit()
		}
	}
}

func main() {
	path := os.Getenv("ACPSCOPE_BENCH_FLOOR")
	if q := os.Getenv("ACPSCOPE_BENCH_FLOOR_QUEUE"); q != "" {
		fmt.Sscan(q, &queueBytes)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		os.Exit(127)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go write(f, stop, done)
	var up, down loss
	go pump(in, os.Stdin, &up)
	pump(os.Stdout, out, &down)
	err = cmd.Wait()
	close(stop)
	<-done
	f.Close()
	os.WriteFile(path+".loss", fmt.Appendf(nil, "%d %d\n", up.lines.Load()+down.lines.Load(), up.bytes.Load()+down.bytes.Load()), 0o600)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
}
`

// readFloorLoss reads what setup (f) wrote at exit: the lines and bytes
// its queue had no room for.
func readFloorLoss(path string) (lines, bytes int64, note string) {
	b, err := os.ReadFile(path + ".loss")
	if err != nil {
		return -1, 0, "floor's loss unreadable: " + err.Error()
	}
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &lines, &bytes); err != nil {
		return -1, 0, fmt.Sprintf("floor's loss unreadable: %q: %v", b, err)
	}
	return lines, bytes, ""
}
