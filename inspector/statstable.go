package inspector

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	"github.com/rivo/tview"
)

// Widths of the statistics columns; the method column takes the rest.
const (
	statCount = 6
	statDur   = 7
	statBytes = 10
	// methodMin is the narrowest method column worth one combined table;
	// below it the counts and the latencies are two tables.
	methodMin = 24
	methodMax = 40
)

// writeMethodTables writes the per-method numbers: one table when the
// width allows, else the counts and the latencies apart, so no column is
// cut at 80 columns and method names keep room.
func writeMethodTables(b *strings.Builder, ms []*capture.MethodStats, width int) {
	counts := 3*(statCount+1) + statBytes + 1
	lat := (statCount + 1) + (len(capture.Percentiles)+1)*(statDur+1)
	if width-counts-lat >= methodMin {
		writeStatTable(b, ms, min(width-counts-lat, methodMax), true, true)
	} else {
		writeStatTable(b, ms, min(max(width-counts, 12), methodMax), true, false)
		var timed []*capture.MethodStats
		for _, m := range ms {
			if m.Latency.Len() > 0 {
				timed = append(timed, m)
			}
		}
		b.WriteString("\n[yellow]latency per method[-]\n")
		if len(timed) == 0 {
			b.WriteString("  no paired responses\n")
		} else {
			writeStatTable(b, timed, min(max(width-lat, 12), methodMax), false, true)
		}
	}
	var need []string
	for _, p := range capture.Percentiles {
		need = append(need, fmt.Sprintf("%s ≥%d", p.Name, p.MinSamples))
	}
	fmt.Fprintf(b, "[gray]n: timed responses; a percentile needs %s of them[-]\n", strings.Join(need, ", "))
}

func writeStatTable(b *strings.Builder, ms []*capture.MethodStats, nameW int, counts, lat bool) {
	b.WriteString("[yellow]" + pad("method", nameW))
	if counts {
		fmt.Fprintf(b, " %*s %*s %*s %*s", statCount, "calls", statCount, "msgs", statCount, "errors", statBytes, "bytes")
	}
	if lat {
		fmt.Fprintf(b, " %*s", statCount, "n")
		for _, p := range capture.Percentiles {
			fmt.Fprintf(b, " %*s", statDur, p.Name)
		}
		fmt.Fprintf(b, " %*s", statDur, "max")
	}
	b.WriteString("[-]\n")
	for _, m := range ms {
		b.WriteString(tview.Escape(pad(clip(m.Method, nameW), nameW)))
		if counts {
			writeCounts(b, m)
		}
		if lat {
			writeLatencies(b, m)
		}
		b.WriteByte('\n')
	}
}

func writeCounts(b *strings.Builder, m *capture.MethodStats) {
	errs := fmt.Sprintf("%*d", statCount, m.Errors)
	if m.Errors > 0 {
		errs = "[red]" + errs + "[-]"
	}
	fmt.Fprintf(b, " %*s %*d %s %*s", statCount, dashZero(m.Requests), statCount, m.Messages, errs, statBytes, human.Size(m.BytesToAgent+m.BytesToClient))
}

func writeLatencies(b *strings.Builder, m *capture.MethodStats) {
	fmt.Fprintf(b, " %*s", statCount, dashZero(m.Latency.Len()))
	for _, p := range capture.Percentiles {
		v := "-"
		if d, ok := m.Latency.At(p); ok {
			v = human.Duration(d)
		}
		fmt.Fprintf(b, " %*s", statDur, v)
	}
	v := "-"
	if m.Latency.Len() > 0 {
		v = human.Duration(m.Latency.Max())
	}
	fmt.Fprintf(b, " %*s", statDur, v)
}

// writeMCPTable lists the MCP methods carried over ACP, when any were.
func writeMCPTable(b *strings.Builder, counts []protocol.MCPCount, width int) {
	if len(counts) == 0 {
		return
	}
	nameW := min(max(width-4*(statCount+1), 12), methodMax)
	b.WriteString("\n[yellow]MCP over ACP[-]\n[yellow]" + pad("mcp method", nameW))
	fmt.Fprintf(b, " %*s %*s %*s %*s[-]\n", statCount, "calls", statCount, "notes", statCount, "errors", statCount, "failed")
	for _, c := range counts {
		b.WriteString(tview.Escape(pad(clip(c.Method, nameW), nameW)))
		fmt.Fprintf(b, " %*s %*s %*s %*s\n", statCount, dashZero(c.Requests), statCount, dashZero(c.Notifications), statCount, dashZero(c.Errors), statCount, dashZero(c.ToolErrors))
	}
	b.WriteString("[gray]failed: tools/call results that say isError[-]\n")
}

// dashZero is n, or "-" for none.
func dashZero(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// pad fills s with spaces to n cells.
func pad(s string, n int) string {
	if w := tview.TaggedStringWidth(tview.Escape(s)); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}
