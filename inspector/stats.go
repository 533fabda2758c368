package inspector

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/wire"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

const (
	pageStats = "stats"
	rateBins  = 60
)

// statsView shows statistics of the whole capture (or of the filter's
// matches), computed on a worker.
type statsView struct {
	text *tview.TextView
	job  *job
}

// methodStats accumulates one method's numbers.
type methodStats struct {
	method    string
	count     int // messages: requests, their responses, notifications
	calls     int // requests alone
	errors    int
	bytes     int64
	latencies []time.Duration
}

// stats is what a scan of the records found.
type stats struct {
	methods    map[string]*methodStats
	total      int
	bytes      int64
	kinds      map[wire.Kind]int
	first      int64
	last       int64
	times      []int64 // receive times, for the rate; sampled when huge
	sampleStep int
	latencies  []time.Duration
}

// collectStats scans the records the filter lets through.
func collectStats(j *job, src capture.Source, f *capture.Filter, progress func(done, total uint64)) (*stats, error) {
	s := &stats{methods: map[string]*methodStats{}, kinds: map[wire.Kind]int{}, sampleStep: 1}
	last := src.Last()
	if last > 200000 {
		s.sampleStep = int(last / 200000)
	}
	pace := j.pacer(progress)
	err := capture.ScanMatches(src, f, 1, last, func(r *capture.Record, matched bool) bool {
		if !pace.tick(r.Seq, last) {
			return false
		}
		if matched {
			s.add(r)
		}
		return true
	})
	return s, err
}

func (s *stats) add(r *capture.Record) {
	s.total++
	s.bytes += r.Size
	s.kinds[r.Kind]++
	if s.first == 0 || r.Time < s.first {
		s.first = r.Time
	}
	if r.Time > s.last {
		s.last = r.Time
	}
	if s.total%s.sampleStep == 0 {
		s.times = append(s.times, r.Time)
	}
	name := r.Method
	switch {
	case r.Kind == wire.KindStderr:
		name = "(stderr)"
	case !r.Kind.IsProtocol():
		name = "(" + r.Kind.String() + ")"
	case name == "" && r.Kind == wire.KindBatch:
		name = "(batch)"
	case name == "":
		name = "(unpaired)"
	}
	m := s.methods[name]
	if m == nil {
		m = &methodStats{method: name}
		s.methods[name] = m
	}
	m.count++
	m.bytes += r.Size
	if r.Kind == wire.KindRequest {
		m.calls++
	}
	if r.Kind == wire.KindError {
		m.errors++
	}
	if (r.Kind == wire.KindResponse || r.Kind == wire.KindError) && r.Peer != 0 && r.Latency > 0 {
		m.latencies = append(m.latencies, r.Latency)
		s.latencies = append(s.latencies, r.Latency)
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

// render lays the statistics out for a TextView.
func (s *stats) render(width int) string {
	var b strings.Builder
	span := time.Duration(s.last - s.first)
	fmt.Fprintf(&b, "[::b]%d messages[::-], %s, over %s", s.total, human.Size(s.bytes), human.Duration(span))
	if span > 0 {
		fmt.Fprintf(&b, " (%.1f msg/s)", float64(s.total)/span.Seconds())
	}
	b.WriteString("\n")
	var kinds []string
	for k, n := range s.kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	b.WriteString("[gray]" + strings.Join(kinds, ", ") + "[-]\n\n")

	ms := make([]*methodStats, 0, len(s.methods))
	for _, m := range s.methods {
		sort.Slice(m.latencies, func(i, j int) bool { return m.latencies[i] < m.latencies[j] })
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].count != ms[j].count {
			return ms[i].count > ms[j].count
		}
		return ms[i].method < ms[j].method
	})
	fmt.Fprintf(&b, "[yellow]%-24s %6s %6s %6s %7s %7s %7s %7s %10s[-]\n", "method", "calls", "msgs", "errors", "p50", "p95", "p99", "max", "bytes")
	for _, m := range ms {
		name := m.method
		if len(name) > 24 {
			name = name[:23] + "…"
		}
		errs := fmt.Sprintf("%6d", m.errors)
		if m.errors > 0 {
			errs = "[red]" + errs + "[-]"
		}
		lat := func(p float64) string {
			if len(m.latencies) == 0 {
				return "-"
			}
			return human.Duration(percentile(m.latencies, p))
		}
		calls := "-"
		if m.calls > 0 {
			calls = strconv.Itoa(m.calls)
		}
		fmt.Fprintf(&b, "%-24s %6s %6d %s %7s %7s %7s %7s %10s\n", tview.Escape(name), calls, m.count, errs,
			lat(0.50), lat(0.95), lat(0.99), lat(1), human.Size(m.bytes))
	}
	b.WriteString("\n[yellow]latency histogram[-] (responses)\n")
	b.WriteString(latencyHistogram(s.latencies, width))
	b.WriteString("\n[yellow]message rate[-] over the capture\n")
	b.WriteString(rateSparkline(s.times, s.first, s.last, s.sampleStep, min(rateBins, max(width-12, 10))))
	return b.String()
}

var latencyBuckets = []struct {
	label string
	upTo  time.Duration
}{
	{"<1ms", time.Millisecond}, {"<10ms", 10 * time.Millisecond}, {"<100ms", 100 * time.Millisecond},
	{"<1s", time.Second}, {"<10s", 10 * time.Second}, {"≥10s", 1<<63 - 1},
}

func latencyHistogram(lat []time.Duration, width int) string {
	if len(lat) == 0 {
		return "  no paired responses\n"
	}
	counts := make([]int, len(latencyBuckets))
	for _, d := range lat {
		for i, bk := range latencyBuckets {
			if d < bk.upTo {
				counts[i]++
				break
			}
		}
	}
	peak := 0
	for _, c := range counts {
		peak = max(peak, c)
	}
	barMax := max(10, min(50, width-20))
	var b strings.Builder
	for i, bk := range latencyBuckets {
		n := counts[i] * barMax / max(peak, 1)
		fmt.Fprintf(&b, "  %-6s %s %d\n", bk.label, strings.Repeat("█", n), counts[i])
	}
	return b.String()
}

var sparks = []rune("▁▂▃▄▅▆▇█")

func rateSparkline(times []int64, first, last int64, step, bins int) string {
	if len(times) == 0 || last <= first {
		return "  (too short to chart)\n"
	}
	counts := make([]int, bins)
	span := last - first
	for _, t := range times {
		i := int((t - first) * int64(bins-1) / span)
		counts[i] += step
	}
	peak := 0
	for _, c := range counts {
		peak = max(peak, c)
	}
	var b strings.Builder
	b.WriteString("  ")
	for _, c := range counts {
		b.WriteRune(sparks[c*(len(sparks)-1)/max(peak, 1)])
	}
	binDur := time.Duration(span / int64(bins))
	fmt.Fprintf(&b, "\n  [gray]each bar %s, peak %d msgs (%.1f msg/s)[-]\n", human.Duration(binDur), peak, float64(peak)/max(binDur.Seconds(), 1e-9))
	return b.String()
}

// showStats opens the statistics page and computes it on a worker.
func (cv *captureView) showStats() {
	if cv.stats != nil {
		cv.stats.job.stop()
	}
	sv := &statsView{text: tview.NewTextView().SetDynamicColors(true).SetScrollable(true).SetWrap(false)}
	title := " statistics "
	if cv.filter != nil {
		title = " statistics of " + tview.Escape(cv.filter.Source()) + " "
	}
	sv.text.SetBorder(true).SetTitle(title)
	sv.text.SetText("computing…")
	sv.text.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyRune && (ev.Rune() == 'q' || ev.Rune() == 's') {
			sv.job.stop()
			cv.a.pages.SwitchToPage(pageCapture)
			cv.a.tv.SetFocus(cv.table)
			return nil
		}
		return ev
	})
	cv.stats = sv
	src, f := cv.src, cv.filter
	_, _, width, _ := cv.table.GetInnerRect()
	sv.job = cv.a.start(func(j *job) { // statistics worker
		s, err := collectStats(j, src, f, func(done, total uint64) {
			j.post(func() { sv.text.SetText(fmt.Sprintf("computing… %d%%", done*100/max(total, 1))) })
		})
		if j.stopped() {
			return
		}
		text := s.render(width)
		if err != nil {
			text = "[red]" + tview.Escape(err.Error()) + "[-]\n\n" + text
		}
		j.post(func() { sv.text.SetText(text) })
	})
	cv.a.pages.AddAndSwitchToPage(pageStats, sv.text, true)
	cv.a.tv.SetFocus(sv.text)
}
