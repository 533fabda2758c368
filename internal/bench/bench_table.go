package bench

import (
	"fmt"
	"io"
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
	fmt.Fprintf(w, "round trips: %d × %d B; msgs: %d × %d B lines; big: %d × %d B lines; RSS: %s\n",
		c.RTTCount, c.MsgSize, c.MsgCount, c.MsgSize, c.BigCount, c.BigSize, rss)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "setup\tRTT p50\tRTT p99\tRTT p99.9\tmsgs/s\tMB/s\twire loss\tcapture loss\tpeak RSS\tRSS (big line)\t")
	for _, row := range r.Rows {
		if row.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t\n", row.Name, "error: "+row.Err.Error())
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", row.Name,
			durRatio(row.RTT.P50, baseDur(base, func(b *Row) time.Duration { return b.RTT.P50 })),
			durRatio(row.RTT.P99, baseDur(base, func(b *Row) time.Duration { return b.RTT.P99 })),
			durRatio(row.RTT.P999, baseDur(base, func(b *Row) time.Duration { return b.RTT.P999 })),
			rateRatio(row.MsgsPerS, baseRate(base, func(b *Row) float64 { return b.MsgsPerS }), "%.0fk", 1e-3),
			rateRatio(row.MBPerS, baseRate(base, func(b *Row) float64 { return b.MBPerS }), "%.0f", 1),
			row.Loss, captureLoss(row), mib(row.PeakRSS), mib(row.RSSLine))
	}
	tw.Flush()
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
			if row.Key == "d" {
				fmt.Fprintf(w, ", capture loss %s", lossString(p.CaptureLoss))
			}
			fmt.Fprintln(w)
		}
	}
	r.printTargets(w)
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
	p50 := ratio(float64(d.RTT.P50), float64(b.RTT.P50))
	p99 := ratio(float64(d.RTT.P99), float64(b.RTT.P99))
	check(p50 <= 1.25, "RTT p50 %.2f× ≤ 1.25×", p50)
	check(p99 <= 1.5, "RTT p99 %.2f× ≤ 1.5×", p99)
	if len(d.Paced) == 0 {
		check(d.Loss == 0 && d.CaptureLoss == 0 && d.MsgsPerS >= 500e3, "zero loss at ≥ 500k msgs/s: %.0fk msgs/s, wire loss %d, capture loss %s", d.MsgsPerS/1e3, d.Loss, captureLoss(d))
	}
	for _, p := range d.Paced {
		if p.Sent <= capture.DefaultQueueBytes {
			notMeasured("zero loss at ≥ %.0f%s: not shown: the run paced at %s sent %s, which the %s capture queue holds however slow the disk (more lines: --msgs, --paced-big-count)",
				p.Goal, p.Unit, p.Target, mib(p.Sent), mib(capture.DefaultQueueBytes))
			continue
		}
		// Pacing by sleeps lands within a few percent of the rate asked.
		check(p.WireLoss == 0 && p.CaptureLoss == 0 && p.Achieved >= 0.95*p.Goal,
			"zero loss at ≥ %.0f%s: paced at %s, achieved %.0f%s, wire loss %d, capture loss %s",
			p.Goal, p.Unit, p.Target, p.Achieved, p.Unit, p.WireLoss, lossString(p.CaptureLoss))
	}
	r.checkPacedForwarding(check, notMeasured, b, d)
	fm, fb := ratio(d.MsgsPerS, b.MsgsPerS), ratio(d.MBPerS, b.MBPerS)
	fmt.Fprintf(w, "  info flat out, where capture cannot keep up and sheds what it cannot record: forwarding %.2f× msgs/s, %.2f× MB/s\n", fm, fb)
	if r.Config.RSSSize > 0 {
		limit := int64(64<<20) + 2*int64(r.Config.RSSSize)
		check(d.RSSLine > 0 && d.RSSLine <= limit, "peak RSS with a %s line %s ≤ 64 MiB + 2 × line = %s", mib(int64(r.Config.RSSSize)), mib(d.RSSLine), mib(limit))
	}
	if c != nil && c.Err == nil {
		tm, tb := ratio(d.MsgsPerS, c.MsgsPerS), ratio(d.MBPerS, c.MBPerS)
		check(tm >= 5 && tb >= 5, "≥ 5× the tee pipeline: %.1f× msgs/s, %.1f× MB/s", tm, tb)
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

func mib(n int64) string {
	if n <= 0 {
		return "—"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
}
