package cli

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkExportImport measures export, import and the dump → import →
// dump round trip of a million records and of a 200 MB message against
// `acpscope dump --format jsonl` of the same capture, on real processes:
// wall time, CPU time and peak RSS (the process's VmHWM), each command
// run benchReps times in turn with dump, medians compared. It prints one
// table per capture, the ratios to dump and the memory target (64 MiB +
// 2× the largest message), and fails nothing: it is a measurement.
//
// Run it alone, once:
//
//	go test -run '^$' -bench ExportImport -benchtime 1x -timeout 30m ./internal/cli
//
// ACPSCOPE_BENCH_LIGHT=1 runs the light sizes (100k records, 20 MB).
func BenchmarkExportImport(b *testing.B) {
	cases := heavy
	if os.Getenv("ACPSCOPE_BENCH_LIGHT") != "" {
		cases = light
	}
	const benchReps = 3
	for range b.N {
		for _, s := range cases {
			steps, largest := roundTrip(b, b.TempDir(), s, benchReps)
			printSteps(s, steps, largest, benchReps)
			base := medianRun(steps[0].runs)
			for _, st := range steps[1:] {
				m := medianRun(st.runs)
				b.ReportMetric(m.wall.Seconds()/base.wall.Seconds(), metricName(s, st.name)+"-time/dump")
			}
		}
	}
}

// printSteps writes the table of one capture's measurements.
func printSteps(s sizes, steps []step, largest, reps int) {
	base := medianRun(steps[0].runs)
	limit := rssLimit(largest)
	fmt.Printf("\n%s (largest message %d bytes; medians of %d runs, commands in turn)\n", s.name, largest, reps)
	fmt.Printf("%-24s %9s %7s %9s %7s %9s   %s\n", "command", "wall", "×dump", "CPU", "×dump", "peak RSS", "≤ 64 MiB + 2× largest")
	for _, st := range steps {
		m := medianRun(st.runs)
		ok := "yes"
		if m.rss > limit {
			ok = "NO"
		}
		fmt.Printf("%-24s %8.2fs %6.2f× %8.2fs %6.2f× %6d MiB   %s (%d MiB)\n", st.name, m.wall.Seconds(), m.wall.Seconds()/base.wall.Seconds(),
			m.cpu.Seconds(), m.cpu.Seconds()/base.cpu.Seconds(), m.rss>>10, ok, limit>>10)
	}
}

// medianRun is the median of each measure of runs, taken apart.
func medianRun(runs []run) run {
	var wall, cpu, rss []float64
	for _, r := range runs {
		wall = append(wall, float64(r.wall))
		cpu = append(cpu, float64(r.cpu))
		rss = append(rss, float64(r.rss))
	}
	return run{wall: time.Duration(median(wall)), cpu: time.Duration(median(cpu)), rss: int64(median(rss))}
}

func metricName(s sizes, step string) string {
	name := s.name + "/" + step
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '/':
			out = append(out, c)
		case len(out) > 0 && out[len(out)-1] != '-':
			out = append(out, '-')
		}
	}
	return string(out)
}
