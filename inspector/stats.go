package inspector

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
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

// stats is what a scan of the records found: the per-method tally that
// `acpscope stats` prints too, and what only the view draws.
type stats struct {
	tally      *capture.Tally
	mcp        protocol.MCPTally
	kinds      map[wire.Kind]int
	times      []int64 // receive times, for the rate; sampled when huge
	sampleStep int
	latencies  []time.Duration
}

// collectStats scans the records the filter lets through.
func collectStats(j *job, src capture.Source, f *capture.Filter, progress func(done, total uint64)) (*stats, error) {
	s := &stats{tally: capture.NewTally(), kinds: map[wire.Kind]int{}, sampleStep: 1}
	last := src.Last()
	if last > 200000 {
		s.sampleStep = int(last / 200000)
	}
	pace := j.pacer(progress)
	var berr error
	err := capture.ScanMatches(src, f, 1, last, func(r *capture.Record, matched bool) bool {
		if !pace.tick(r.Seq, last) {
			return false
		}
		if !matched {
			return true
		}
		s.add(r)
		if protocol.MCPMethod(r.Method) != "" {
			// Only MCP-over-ACP records are read whole.
			m := r.Msg
			m.Body, berr = src.Body(r.Seq)
			s.mcp.Add(&m)
		}
		return berr == nil
	})
	if err == nil {
		err = berr
	}
	return s, err
}

func (s *stats) add(r *capture.Record) {
	s.tally.Add(r)
	s.kinds[r.Kind]++
	if s.tally.Records%s.sampleStep == 0 {
		s.times = append(s.times, r.Time)
	}
	if (r.Kind == wire.KindResponse || r.Kind == wire.KindError) && r.Peer != 0 && r.Latency > 0 {
		s.latencies = append(s.latencies, r.Latency)
	}
}

// render lays the statistics out for a TextView width cells wide.
func (s *stats) render(width int) string {
	var b strings.Builder
	t := s.tally
	span := time.Duration(t.Last - t.First)
	fmt.Fprintf(&b, "[::b]%d messages[::-], %s, over %s", t.Records, human.Size(t.Bytes), human.Duration(span))
	if span > 0 {
		fmt.Fprintf(&b, " (%.1f msg/s)", float64(t.Records)/span.Seconds())
	}
	b.WriteString("\n")
	var kinds []string
	for k, n := range s.kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	b.WriteString("[gray]" + strings.Join(kinds, ", ") + "[-]\n\n")

	writeMethodTables(&b, t.Sorted(), width)
	writeMCPTable(&b, s.mcp.Counts(), width)
	fmt.Fprintf(&b, "\n[yellow]latency histogram[-] (%d timed responses)\n", len(s.latencies))
	b.WriteString(latencyHistogram(s.latencies, width))
	b.WriteString("\n[yellow]message rate[-] over the capture\n")
	b.WriteString(rateSparkline(s.times, t.First, t.Last, s.sampleStep, min(rateBins, max(width-12, 10))))
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
		text := s.render(width - 2) // inside the border
		if err != nil {
			text = "[red]" + tview.Escape(err.Error()) + "[-]\n\n" + text
		}
		j.post(func() { sv.text.SetText(text) })
	})
	cv.a.pages.AddAndSwitchToPage(pageStats, sv.text, true)
	cv.a.tv.SetFocus(sv.text)
}
