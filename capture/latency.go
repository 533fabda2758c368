package capture

import (
	"math"
	"slices"
	"time"
)

// Percentile is a latency percentile and the fewest samples that give it
// meaning: the p99 of ten samples is their maximum under another name,
// and printing it would claim more than the capture shows.
type Percentile struct {
	Name       string  // as printed: p50
	P          float64 // the fraction below: 0.50
	MinSamples int
}

// Percentiles are the latency percentiles acpscope shows, and when: the
// one rule for `acpscope stats` and the inspector's statistics view.
var Percentiles = []Percentile{
	{Name: "p50", P: 0.50, MinSamples: 2},
	{Name: "p95", P: 0.95, MinSamples: 20},
	{Name: "p99", P: 0.99, MinSamples: 100},
}

// Latencies collects latency samples (a response's time since its
// request) and reads percentiles from them. The zero value is empty and
// ready; it is not safe for concurrent use.
type Latencies struct {
	d      []time.Duration
	sorted bool
}

// Add records one sample.
func (l *Latencies) Add(d time.Duration) {
	l.d = append(l.d, d)
	l.sorted = false
}

// Len is the number of samples.
func (l *Latencies) Len() int { return len(l.d) }

// Max is the largest sample (0 when there are none).
func (l *Latencies) Max() time.Duration {
	if len(l.d) == 0 {
		return 0
	}
	l.sort()
	return l.d[len(l.d)-1]
}

// At returns percentile p by the nearest-rank method (the smallest sample
// at or below which a fraction p of the samples lie, so always one that
// was measured), and false when there are fewer samples than p needs.
func (l *Latencies) At(p Percentile) (time.Duration, bool) {
	if len(l.d) == 0 || len(l.d) < p.MinSamples {
		return 0, false
	}
	l.sort()
	rank := int(math.Ceil(p.P * float64(len(l.d))))
	return l.d[min(max(rank, 1), len(l.d))-1], true
}

func (l *Latencies) sort() {
	if !l.sorted {
		slices.Sort(l.d)
		l.sorted = true
	}
}
