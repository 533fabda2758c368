package peer

import (
	"bufio"
	"bytes"
	"io"
	"time"
)

// burst writes n JSON notification lines of exactly size bytes each,
// newline included, through a large buffer so the writer is never the
// bottleneck of a throughput measurement. With rate > 0 it paces itself
// to rate lines per second, checking about every millisecond, so a
// benchmark can ask whether capture keeps up at a given rate.
func burst(stdout io.Writer, n, size, rate int) int {
	w := bufio.NewWriterSize(stdout, 1<<20)
	line := burstLine(size)
	digits := bytes.Index(line, []byte(`"i":"`)) + 5
	step := max(1, rate/1000)
	start := time.Now()
	for i := 0; i < n; i++ {
		if rate > 0 && i > 0 && i%step == 0 {
			// Line i is due i/rate after the start: the first goes out
			// at once and the run spans (n-1)/rate plus one line's time.
			if w.Flush() != nil {
				return 1
			}
			time.Sleep(time.Until(start.Add(time.Duration(float64(i) / float64(rate) * float64(time.Second)))))
		}
		stamp(line[digits:digits+10], i)
		if _, err := w.Write(line); err != nil {
			return 1
		}
	}
	if w.Flush() != nil {
		return 1
	}
	return 0
}

// burstLine builds a line of size bytes (at least the fixed part) with a
// ten-digit counter field and padding.
func burstLine(size int) []byte {
	const head = `{"jsonrpc":"2.0","method":"bench/tick","params":{"i":"0000000000","pad":"`
	const tail = `"}}` + "\n"
	pad := size - len(head) - len(tail)
	if pad < 0 {
		pad = 0
	}
	return []byte(head + string(bytes.Repeat([]byte{'x'}, pad)) + tail)
}

// stamp writes i as ten zero-padded digits into b.
func stamp(b []byte, i int) {
	for k := len(b) - 1; k >= 0; k-- {
		b[k] = byte('0' + i%10)
		i /= 10
	}
}
