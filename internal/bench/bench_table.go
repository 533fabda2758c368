package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// Print writes the report as one table, each value followed by its ratio
// to the minimal forwarder (b), then the targets and whether they hold.
func (r *Report) Print(w io.Writer) {
	c := r.Config
	base := r.row("b")
	rss := "skipped"
	if c.RSSSize > 0 {
		rss = fmt.Sprintf("one %d B line", c.RSSSize)
	}
	fmt.Fprintf(w, "round trips: %d runs × %d × %d B; msgs: %d × %d B lines; big: %d × %d B lines; echo: one line of %s; RSS: %s\n",
		c.RTTRuns, c.RTTCount, c.MsgSize, c.MsgCount, c.MsgSize, c.BigCount, c.BigSize, echoSizes(c), rss)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "setup\tRTT p50\tRTT p99\tRTT p99.9\tmsgs/s\tCPU s/M msgs\tMB/s"
	for _, size := range c.EchoSizes {
		if size > 0 {
			head += fmt.Sprintf("\techo %s", mb(size))
		}
	}
	fmt.Fprintln(tw, head+"\twire loss\tcapture loss\tpeak RSS\tRSS (big line)\t")
	for _, row := range r.Rows {
		if row.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t\t\n", row.Name, "error: "+row.Err.Error())
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s", row.Name,
			durRatio(row.RTT.P50, baseDur(base, func(b *Row) time.Duration { return b.RTT.P50 })),
			durRatio(row.RTT.P99, baseDur(base, func(b *Row) time.Duration { return b.RTT.P99 })),
			durRatio(row.RTT.P999, baseDur(base, func(b *Row) time.Duration { return b.RTT.P999 })),
			rateRatio(row.MsgsPerS, baseRate(base, func(b *Row) float64 { return b.MsgsPerS }), "%.0fk", 1e-3),
			cpuString(row.CPUPerM),
			rateRatio(row.MBPerS, baseRate(base, func(b *Row) float64 { return b.MBPerS }), "%.0f", 1))
		for k, size := range c.EchoSizes {
			if size > 0 {
				fmt.Fprintf(tw, "\t%s", durRatio(echoAt(row, k), baseDur(base, func(b *Row) time.Duration { return echoAt(b, k) })))
			}
		}
		fmt.Fprintf(tw, "\t%d\t%s\t%s\t%s\t\n", row.Loss, captureLoss(row), mib(row.PeakRSS), mib(row.RSSLine))
	}
	tw.Flush()
	r.printMachine(w)
	if c := r.row("c"); c != nil {
		// Quoted for a POSIX shell, so the line can be pasted to rerun (c).
		fmt.Fprintf(w, "(c) is: bash -c '%s' bash AGENT…\n", strings.ReplaceAll(r.Tee, "'", `'\''`))
	}
	for _, row := range r.Rows {
		if row.CaptureNote != "" {
			fmt.Fprintf(w, "%s: %s\n", row.Name, row.CaptureNote)
		}
		for _, p := range row.Paced {
			fmt.Fprintf(w, "%s paced at %s: achieved %.0f%s, wire loss %d", row.Name, p.Target, p.Achieved, p.Unit, p.WireLoss)
			if p.Size == c.MsgSize {
				fmt.Fprintf(w, ", CPU %.2f s/M lines", p.CPUPerM)
			}
			if p.Busy >= 0 {
				fmt.Fprintf(w, ", all CPUs %.0f%% busy", 100*p.Busy)
			}
			if row.Key == "d" || row.Key == "f" {
				fmt.Fprintf(w, ", capture loss %s%s", lossString(p.CaptureLoss), backlogString(p))
			}
			fmt.Fprintln(w)
		}
	}
	r.printTargets(w)
}

// backlogString says how far capture fell behind a paced run, if it did:
// what waited on disk, and how long after the wire it finished.
func backlogString(p PacedRun) string {
	if p.Backlog <= 0 {
		return ""
	}
	return fmt.Sprintf(", behind by up to %s on disk, recorded %s after the last line", mib(p.Backlog), p.Lag.Round(time.Millisecond))
}

// cpuBound is how busy the CPUs must be over a paced run for a loss
// there to be put down to a lack of CPU rather than of disk.
const cpuBound = 0.9

// shortOfCPU says, of a paced run that lost lines, when every CPU was
// busy: capture, at low priority, had only what forwarding left.
func shortOfCPU(p PacedRun) string {
	if p.CaptureLoss <= 0 || p.Busy < cpuBound {
		return ""
	}
	return fmt.Sprintf("; the CPUs were %.0f%% busy: capture ran short of CPU here, before the disk bound", 100*p.Busy)
}

// printTargets checks the targets README states, as ratios within this run.
func (r *Report) printTargets(w io.Writer) {
	b, d, c := r.row("b"), r.row("d"), r.row("c")
	if b == nil || d == nil || b.Err != nil || d.Err != nil {
		return
	}
	check := func(ok bool, format string, args ...any) {
		mark := "ok  "
		if !ok {
			mark = "MISS"
		}
		fmt.Fprintf(w, "  %s "+format+"\n", append([]any{mark}, args...)...)
	}
	// notMeasured is a target this run could not judge, and why: not a miss.
	notMeasured := func(format string, args ...any) { fmt.Fprintf(w, "  n/a  "+format+"\n", args...) }
	ratio := func(x, y float64) float64 {
		if y == 0 {
			return 0
		}
		return x / y
	}
	fmt.Fprintln(w, "targets (d) against (b):")
	r.checkRTTRuns(w, check, b, d)
	fm, fb := ratio(d.MsgsPerS, b.MsgsPerS), ratio(d.MBPerS, b.MBPerS)
	if b.MsgsPerS == 0 || d.MsgsPerS == 0 {
		notMeasured("flat out, %d B lines: not measured", r.Config.MsgSize)
	} else {
		check(fm >= 0.85, "flat out, %d × %d B lines: forwarding %.2f× ≥ 0.85× the forwarder (capture kept what it could and counted the rest: capture loss %s over every run); %d B lines %.2f× (no target)",
			r.Config.MsgCount, r.Config.MsgSize, fm, captureLoss(d), r.Config.BigSize, fb)
	}
	for _, p := range d.Paced {
		if p.Sent <= capture.DefaultQueueBytes {
			notMeasured("zero loss at %.0f%s: not shown: the run paced at %s sent %s, which the %s capture queue holds however slow the disk (more lines: --msgs, --paced-big-count)",
				p.Goal, p.Unit, p.Target, mib(p.Sent), mib(capture.DefaultQueueBytes))
			continue
		}
		// Pacing by sleeps lands within a few percent of the rate asked.
		check(p.WireLoss == 0 && p.CaptureLoss == 0 && p.Achieved >= 0.95*p.Goal,
			"zero loss at %.0f%s: paced at %s, achieved %.0f%s, wire loss %d, capture loss %s%s%s",
			p.Goal, p.Unit, p.Target, p.Achieved, p.Unit, p.WireLoss, lossString(p.CaptureLoss), backlogString(p), shortOfCPU(p))
	}
	r.checkPacedForwarding(check, notMeasured, b, d)
	for k, size := range r.Config.EchoSizes {
		if size <= 0 {
			continue
		}
		x := ratio(float64(echoAt(d, k)), float64(echoAt(b, k)))
		check(x > 0 && x <= 1.15, "one %s line echoed %.2f× ≤ 1.15× (%s against %s)", mb(size), x, roundDur(echoAt(d, k)), roundDur(echoAt(b, k)))
	}
	if r.Config.RSSSize > 0 {
		limit := int64(64<<20) + 2*int64(r.Config.RSSSize)
		check(d.RSSLine > 0 && d.RSSLine <= limit, "peak RSS with a %s line %s ≤ 64 MiB + 2 × line = %s", mib(int64(r.Config.RSSSize)), mib(d.RSSLine), mib(limit))
	}
	if c != nil && c.Err == nil {
		dc, how := d.CPUPerM, "flat out, where capture dropped what it could not keep"
		for _, p := range d.Paced {
			if p.Size == r.Config.MsgSize && p.CaptureLoss == 0 {
				dc, how = p.CPUPerM, "paced at "+p.Target+", every line recorded"
			}
		}
		check(dc > 0 && dc <= c.CPUPerM, "CPU %.2f s per million lines (%s) ≤ the tee pipeline's %.2f s (flat out); whole setups, agent included", dc, how, c.CPUPerM)
		tm, tb := ratio(d.MsgsPerS, c.MsgsPerS), ratio(d.MBPerS, c.MBPerS)
		check(tm >= 5 && tb >= 5, "≥ 5× the tee pipeline: %.1f× msgs/s, %.1f× MB/s", tm, tb)
	}
}

// checkRTTRuns judges the round-trip targets run by run (p50 ≤ 1.1×,
// p99 ≤ 1.3× the forwarder in the same run, in at least 9 of 10 runs)
// and prints the spread of the ratios.
func (r *Report) checkRTTRuns(w io.Writer, check func(bool, string, ...any), b, d *Row) {
	n := min(len(b.RTTRuns), len(d.RTTRuns))
	if n == 0 {
		return
	}
	var p50s, p99s []float64
	met50, met99 := 0, 0
	for i := range n {
		x50 := float64(d.RTTRuns[i].P50) / float64(b.RTTRuns[i].P50)
		x99 := float64(d.RTTRuns[i].P99) / float64(b.RTTRuns[i].P99)
		p50s, p99s = append(p50s, x50), append(p99s, x99)
		if x50 <= 1.1 {
			met50++
		}
		if x99 <= 1.3 {
			met99++
		}
	}
	need := (9*n + 9) / 10
	check(met50 >= need, "RTT p50 ≤ 1.1× in %d of %d runs (need %d): %s", met50, n, need, spread(p50s))
	check(met99 >= need, "RTT p99 ≤ 1.3× in %d of %d runs (need %d): %s", met99, n, need, spread(p99s))
}

// spread prints min, median and max of ratios.
func spread(v []float64) string {
	v = append([]float64(nil), v...)
	slices.Sort(v)
	return fmt.Sprintf("min %.2f×, median %.2f×, max %.2f×", v[0], v[len(v)/2], v[len(v)-1])
}

// printMachine says what the machine gives capture, the capture
// directory's synced write rate and the cost of fresh memory, beside
// what capture recorded flat out, so it is plain when the machine is the
// bound.
func (r *Report) printMachine(w io.Writer) {
	switch {
	case r.DiskErr != nil:
		fmt.Fprintf(w, "capture directory synced write rate: not measured: %v\n", r.DiskErr)
	case r.DiskMBPerS > 0:
		fmt.Fprintf(w, "capture directory synced write rate: %.0f MB/s (%s in 1 MiB writes, then fsync, like dd conv=fsync)\n", r.DiskMBPerS, mib(int64(r.Config.SyncProbeBytes)))
	}
	if r.FaultErr != nil {
		fmt.Fprintf(w, "fresh memory: not measured: %v\n", r.FaultErr)
	} else {
		fmt.Fprintf(w, "fresh memory: %.1f µs to fault in each 4 KiB page (%s touched once, median of 3); capture pays it for every page it takes fresh\n",
			float64(r.FaultCost.Nanoseconds())/1e3, mib(faultProbeBytes))
	}
	r.printSlowTrips(w)
	for _, row := range r.Rows {
		if row.CaptureMBPerS > 0 {
			fmt.Fprintf(w, "%s recorded %.0f MB/s flat out (%d B lines: bytes kept over the whole run, start-up to exit, median)\n", row.Name, row.CaptureMBPerS, r.Config.BigSize)
		}
	}
}

// printSlowTrips counts each setup's round trips over slowRoundTrip.
func (r *Report) printSlowTrips(w io.Writer) {
	var parts []string
	for _, row := range r.Rows {
		if row.Err == nil && row.RTT.N > 0 {
			parts = append(parts, fmt.Sprintf("%s %d of %d", row.Name, row.RTT.Slow, row.RTT.N))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "round trips over %s: %s\n", slowRoundTrip, strings.Join(parts, "; "))
	}
}

// checkPacedForwarding compares forwarding where capture keeps up: at
// each paced rate, what (d) achieved with no capture loss against what
// (b) achieved at the same rate in the same run.
func (r *Report) checkPacedForwarding(check func(bool, string, ...any), notMeasured func(string, ...any), b, d *Row) {
	if len(d.Paced) == 0 || len(b.Paced) != len(d.Paced) {
		notMeasured("forwarding ≥ 0.8× the forwarder where capture keeps up: not measured (%d paced runs of (d), %d of (b); --paced-msgs and --paced-mb run them)", len(d.Paced), len(b.Paced))
		return
	}
	var parts []string
	ok, judged := true, false
	for i, dp := range d.Paced {
		bp := b.Paced[i]
		x := 0.0
		if bp.Achieved > 0 {
			x = dp.Achieved / bp.Achieved
		}
		kept := dp.CaptureLoss == 0 && dp.WireLoss == 0
		shown := dp.Sent > capture.DefaultQueueBytes
		ok = ok && kept && shown && x >= 0.8
		judged = judged || shown || !kept
		part := fmt.Sprintf("%.2f× at %s (%.0f%s against %.0f%s)", x, dp.Target, dp.Achieved, dp.Unit, bp.Achieved, bp.Unit)
		switch {
		case !kept:
			part += ", but capture lost messages there"
		case !shown:
			part += ", but the run fits in the capture queue"
		}
		parts = append(parts, part)
	}
	if !judged {
		notMeasured("forwarding ≥ 0.8× the forwarder where capture keeps up: not shown: %s", strings.Join(parts, "; "))
		return
	}
	check(ok, "forwarding ≥ 0.8× the forwarder where capture keeps up: %s", strings.Join(parts, "; "))
}

func (r *Report) row(key string) *Row {
	for _, row := range r.Rows {
		if row.Key == key {
			return row
		}
	}
	return nil
}

func baseDur(base *Row, f func(*Row) time.Duration) time.Duration {
	if base == nil || base.Err != nil {
		return 0
	}
	return f(base)
}

func baseRate(base *Row, f func(*Row) float64) float64 {
	if base == nil || base.Err != nil {
		return 0
	}
	return f(base)
}

func durRatio(d, base time.Duration) string {
	if d == 0 {
		return "—"
	}
	s := roundDur(d).String()
	if base > 0 {
		s += fmt.Sprintf(" (%.2f×)", float64(d)/float64(base))
	}
	return s
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= 10*time.Microsecond:
		return d.Round(100 * time.Nanosecond)
	}
	return d.Round(10 * time.Nanosecond)
}

func rateRatio(v, base float64, format string, scale float64) string {
	if v == 0 {
		return "—"
	}
	s := fmt.Sprintf(format, v*scale)
	if base > 0 {
		s += fmt.Sprintf(" (%.2f×)", v/base)
	}
	return s
}

func lossString(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

func captureLoss(row *Row) string {
	if row.CaptureLoss < 0 {
		if row.Key == "d" {
			return "?"
		}
		return "—"
	}
	return fmt.Sprint(row.CaptureLoss)
}

func echoAt(row *Row, k int) time.Duration {
	if row == nil || k >= len(row.Echo) {
		return 0
	}
	return row.Echo[k]
}

func echoSizes(c Config) string {
	var parts []string
	for _, size := range c.EchoSizes {
		if size > 0 {
			parts = append(parts, mb(size))
		}
	}
	if len(parts) == 0 {
		return "skipped"
	}
	return strings.Join(parts, ", ")
}

// mb writes a size in decimal megabytes, as the echo sizes are given.
func mb(n int) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + " MB"
}

func cpuString(s float64) string {
	if s <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", s)
}

func mib(n int64) string {
	if n <= 0 {
		return "—"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
}
