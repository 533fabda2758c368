package bench

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"time"
)

// Percentiles of a latency distribution, and how many of its values
// took longer than slowRoundTrip.
type Percentiles struct {
	P50, P99, P999 time.Duration
	N              int
	Slow           int
}

// slowRoundTrip marks a round trip as a stall rather than the usual
// spread: on a quiet machine, 1.7 to 10 times the minimal forwarder's
// p99 on each one measured so far (under load that p99 passes it).
// Counting them shows a tail the percentiles hide (a few stalls per
// thousand move p99.9, not p99), and where they come from: on a guest
// whose kernel does not preempt, capture's commits.
const slowRoundTrip = time.Millisecond

func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	fast, _ := slices.BinarySearch(d, slowRoundTrip+1)
	return Percentiles{P50: at(0.50), P99: at(0.99), P999: at(0.999), N: len(d), Slow: len(d) - fast}
}

// rttWarmup round trips are made and thrown away before measuring, so
// process start-up and page faults do not count.
const rttWarmup = 500

// measureRTT sends count requests of size bytes, newline included, one
// at a time, after rttWarmup untimed ones, and times each until its echo
// is back in full.
func measureRTT(m *benchRun, count, size int) (Percentiles, error) {
	st := newRTTState(size)
	if err := st.trips(m, rttWarmup, nil); err != nil {
		return Percentiles{}, err
	}
	times := make([]time.Duration, 0, count)
	if err := st.trips(m, count, &times); err != nil {
		return Percentiles{}, err
	}
	return percentiles(times), nil
}

// rttState is one pipeline's request buffer and counter.
type rttState struct {
	req, resp []byte
	i         int
}

func newRTTState(size int) *rttState {
	return &rttState{req: requestLine(size), resp: make([]byte, size)}
}

// trips makes n round trips, appending their times to times unless nil.
func (st *rttState) trips(m *benchRun, n int, times *[]time.Duration) error {
	for range n {
		stampID(st.req, st.i)
		start := time.Now()
		if _, err := m.stdin.Write(st.req); err != nil {
			return fmt.Errorf("round trip %d: writing: %w", st.i, err)
		}
		if _, err := io.ReadFull(m.stdout, st.resp); err != nil {
			return fmt.Errorf("round trip %d: reading: %w", st.i, err)
		}
		if times != nil {
			*times = append(*times, time.Since(start))
		}
		if !bytes.Equal(st.req, st.resp) {
			return fmt.Errorf("round trip %d: the echo differs from the request", st.i)
		}
		st.i++
	}
	return nil
}

// requestLine is a JSON-RPC request of exactly size bytes with a
// ten-digit id, newline included.
func requestLine(size int) []byte {
	head := `{"jsonrpc":"2.0","id":1000000000,"method":"bench/ping","params":{"pad":"`
	tail := `"}}` + "\n"
	b := []byte(head + string(bytes.Repeat([]byte{'x'}, max(0, size-len(head)-len(tail)))) + tail)
	return b
}

// stampID writes i into the request's ten-digit id.
func stampID(req []byte, i int) {
	const at = len(`{"jsonrpc":"2.0","id":`)
	i += 1000000000
	for k := at + 9; k >= at; k-- {
		req[k] = byte('0' + i%10)
		i /= 10
	}
}

func countNewlines(b []byte) int { return bytes.Count(b, []byte{'\n'}) }
