package bench

import (
	"context"
	"fmt"
	"io"
	"time"
)

// echoPhase sends each of cfg.EchoSizes as one line through every
// setup's echo pipeline, cfg.Reps times, setups alternating, the machine
// settled before each, and keeps the median time each took to come back
// whole.
func echoPhase(ctx context.Context, cfg Config, setups []*benchSetup, rows []*Row) {
	runs := make([]*benchRun, len(setups))
	for i, s := range setups {
		if rows[i].Err != nil {
			continue
		}
		m, err := s.run(ctx, "echo", "echo")
		if err != nil {
			rows[i].Err = fmt.Errorf("echo: %w", err)
			continue
		}
		runs[i] = m
	}
	times := make([][][]time.Duration, len(setups))
	for i := range times {
		times[i] = make([][]time.Duration, len(cfg.EchoSizes))
	}
	for k, size := range cfg.EchoSizes {
		line := requestLine(size)
		for range cfg.Reps {
			for i, m := range runs {
				if m == nil || rows[i].Err != nil {
					continue
				}
				settle()
				d, err := echoOnce(m, line)
				if err != nil {
					rows[i].Err = fmt.Errorf("echo of %d B: %w", size, err)
					continue
				}
				times[i][k] = append(times[i][k], d)
			}
		}
	}
	for i, m := range runs {
		if m == nil {
			continue
		}
		if err := m.finish(nil); err != nil && rows[i].Err == nil {
			rows[i].Err = fmt.Errorf("echo: %w", err)
		}
		rows[i].note(m)
		if rows[i].Err != nil {
			continue
		}
		for k := range cfg.EchoSizes {
			rows[i].Echo = append(rows[i].Echo, medianDur(times[i][k]))
		}
	}
}

// echoOnce writes line (one goroutine, waited for) while reading its
// echo back, and returns the time from the first byte written to the
// last byte read.
func echoOnce(m *benchRun, line []byte) (time.Duration, error) {
	werr := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := m.stdin.Write(line)
		werr <- err
	}()
	buf := make([]byte, 1<<20)
	var n int
	var rerr error
	for n < len(line) && rerr == nil {
		var k int
		k, rerr = m.stdout.Read(buf[:min(len(buf), len(line)-n)])
		if k > 0 && n+k == len(line) && buf[k-1] != '\n' {
			rerr = fmt.Errorf("the echo does not end the line")
		}
		n += k
	}
	d := time.Since(start)
	if rerr != nil {
		m.stdin.Close() // unblocks the writer if the pipeline died
		<-werr
		if rerr == io.EOF {
			rerr = io.ErrUnexpectedEOF
		}
		return 0, fmt.Errorf("reading the echo after %d of %d bytes: %w", n, len(line), rerr)
	}
	if err := <-werr; err != nil {
		return 0, fmt.Errorf("writing: %w", err)
	}
	return d, nil
}

func medianDur(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return percentiles(append([]time.Duration(nil), d...)).P50
}
