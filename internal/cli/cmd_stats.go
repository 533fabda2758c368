package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	flag "github.com/spf13/pflag"
)

// statsHelp is `acpscope stats`'s synopsis, examples and flags.
func statsHelp() help {
	return help{
		usage: "[CAPTURE] [--filter EXPR] [--format table|json]",
		example: `  acpscope stats                                   # the newest capture
  acpscope stats latest --filter 'session:sess_1'
  acpscope stats latest --format json | jq '.methods[] | select(.errors > 0)'`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.StringP("filter", "f", "", "only records matching this filter expression ('acpscope stats --help-filter')")
			fs.Bool("help-filter", false, "print the filter language and exit")
			fs.String("format", "table", "table or json")
		},
	}
}

func runStats(fs *flag.FlagSet, args []string) (int, error) {
	if help, _ := fs.GetBool("help-filter"); help {
		fmt.Print(capture.FilterGrammar)
		return 0, nil
	}
	format, _ := fs.GetString("format")
	if format != "table" && format != "json" {
		return 2, usageErrorf("unknown --format %q: use table or json", format)
	}
	src, filter, code, err := openFiltered(fs, args, oneCapture, capture.OpenComplete)
	if err != nil {
		return code, err
	}
	defer src.Close()
	tally := capture.NewTally()
	var mcp protocol.MCPTally
	var berr error
	err = capture.ScanMatches(src, filter, 1, 0, func(r *capture.Record, matched bool) bool {
		if !matched {
			return true
		}
		tally.Add(r)
		if protocol.MCPMethod(r.Method) != "" {
			// Only MCP-over-ACP records are read whole: the rest of the
			// tally needs no bodies.
			m := r.Msg
			m.Body, berr = src.Body(r.Seq)
			mcp.Add(&m)
		}
		return berr == nil
	})
	if err == nil {
		err = berr
	}
	if err != nil {
		return 1, err
	}
	name := capturePath(src)
	if format == "json" {
		return 0, writeStatsJSON(os.Stdout, name, tally, mcp.Counts())
	}
	if err := writeStatsTable(os.Stdout, name, src.Meta(), tally); err != nil {
		return 1, err
	}
	if err := writeFaultTable(os.Stdout, tally.SortedFaults()); err != nil {
		return 1, err
	}
	return 0, writeMCPTable(os.Stdout, mcp.Counts())
}

// writeFaultTable lists what acpscope itself altered (fault plans,
// holds, hand-sent messages), when it altered anything: numbers that
// would otherwise read as the peers' doing.
func writeFaultTable(w io.Writer, faults []*capture.FaultStats) error {
	if len(faults) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nAltered by acpscope (filter: fault:*):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE OR WHO\tACTION\tDROPPED\tREPLACED\tFORWARDED\tINJECTED")
	for _, f := range faults {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Who, f.Action, dashZero(f.Dropped), dashZero(f.Replaced), dashZero(f.Forwarded), dashZero(f.Injected))
	}
	return tw.Flush()
}

// writeMCPTable lists the MCP methods that travelled over ACP, when any
// did: the tool calls an agent made through its client.
func writeMCPTable(w io.Writer, counts []protocol.MCPCount) error {
	if len(counts) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nMCP over ACP (mcp/connect, mcp/message, mcp/disconnect):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MCP METHOD\tREQUESTS\tNOTIFICATIONS\tERRORS\tTOOL ERRORS")
	for _, c := range counts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Method, dashZero(c.Requests), dashZero(c.Notifications), dashZero(c.Errors), dashZero(c.ToolErrors))
	}
	return tw.Flush()
}

// capturePath is the file a source reads, for the header of a report.
func capturePath(src capture.Source) string {
	switch s := src.(type) {
	case *capture.Reader:
		return s.Path()
	case *capture.Live:
		return s.Path()
	}
	return ""
}

func writeStatsTable(w io.Writer, path string, meta capture.Meta, t *capture.Tally) error {
	about := []string{}
	for _, s := range []string{meta.Agent, capture.Role(meta)} {
		if s != "" {
			about = append(about, s)
		}
	}
	name := filepath.Base(path)
	if len(about) > 0 {
		name += " (" + strings.Join(about, ", ") + ")"
	}
	fmt.Fprintf(w, "%s: %d records, %s, over %s\n\n", name, t.Records, human.Size(t.Bytes), human.Duration(time.Duration(t.Last-t.First)))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{"METHOD", "CALLS", "ERRORS", "SAMPLES"}
	for _, p := range capture.Percentiles {
		head = append(head, strings.ToUpper(p.Name))
	}
	head = append(head, "MAX", "TO AGENT", "TO CLIENT")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, m := range t.Sorted() {
		row := []string{m.Method, dashZero(m.Requests + m.Notifications), dashZero(m.Errors), strconv.Itoa(m.Latency.Len())}
		for _, p := range capture.Percentiles {
			row = append(row, percentileText(&m.Latency, p))
		}
		maxText := "-"
		if m.Latency.Len() > 0 {
			maxText = human.Duration(m.Latency.Max())
		}
		row = append(row, maxText, human.Size(m.BytesToAgent), human.Size(m.BytesToClient))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var rule []string
	for _, p := range capture.Percentiles {
		rule = append(rule, fmt.Sprintf("%s %d", p.Name, p.MinSamples))
	}
	_, err := fmt.Fprintf(w, "\nlatency of answered requests; a percentile needs samples (%s): '-' where there are fewer\n", strings.Join(rule, ", "))
	return err
}

func percentileText(l *capture.Latencies, p capture.Percentile) string {
	d, ok := l.At(p)
	if !ok {
		return "-"
	}
	return human.Duration(d)
}

func dashZero(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// statsJSON is `stats --format json`: latencies in milliseconds, a
// percentile null where the samples are too few for it.
type statsJSON struct {
	Capture   string            `json:"capture"`
	Records   int               `json:"records"`
	Bytes     int64             `json:"bytes"`
	SpanMs    float64           `json:"spanMs"`
	MinSample map[string]int    `json:"percentileMinSamples"`
	Methods   []methodStatsJSON `json:"methods"`
	MCP       []mcpStatsJSON    `json:"mcp"`
	Faults    []faultStatsJSON  `json:"faults"` // what acpscope altered
}

// faultStatsJSON is one kind of alteration: records by stage.
type faultStatsJSON struct {
	Who       string `json:"who"` // the rule's name, or intercept / send
	Action    string `json:"action"`
	Dropped   int    `json:"dropped"`
	Replaced  int    `json:"replaced"`
	Forwarded int    `json:"forwarded"`
	Injected  int    `json:"injected"`
}

// mcpStatsJSON is one MCP method carried over ACP.
type mcpStatsJSON struct {
	Method        string `json:"method"`
	Requests      int    `json:"requests"`
	Notifications int    `json:"notifications"`
	Errors        int    `json:"errors"`
	ToolErrors    int    `json:"toolErrors"`
}

type methodStatsJSON struct {
	Method        string         `json:"method"`
	Messages      int            `json:"messages"`
	Requests      int            `json:"requests"`
	Notifications int            `json:"notifications"`
	Errors        int            `json:"errors"`
	BytesToAgent  int64          `json:"bytesToAgent"`
	BytesToClient int64          `json:"bytesToClient"`
	Latency       map[string]any `json:"latency"` // samples, p50Ms, p95Ms, p99Ms, maxMs
}

func writeStatsJSON(w io.Writer, path string, t *capture.Tally, mcp []protocol.MCPCount) error {
	out := statsJSON{Capture: path, Records: t.Records, Bytes: t.Bytes, SpanMs: ms(time.Duration(t.Last - t.First)),
		MinSample: map[string]int{}, Methods: []methodStatsJSON{}, MCP: []mcpStatsJSON{}, Faults: []faultStatsJSON{}}
	for _, f := range t.SortedFaults() {
		out.Faults = append(out.Faults, faultStatsJSON{Who: f.Who, Action: f.Action, Dropped: f.Dropped, Replaced: f.Replaced, Forwarded: f.Forwarded, Injected: f.Injected})
	}
	for _, c := range mcp {
		out.MCP = append(out.MCP, mcpStatsJSON{Method: c.Method, Requests: c.Requests, Notifications: c.Notifications, Errors: c.Errors, ToolErrors: c.ToolErrors})
	}
	for _, p := range capture.Percentiles {
		out.MinSample[p.Name] = p.MinSamples
	}
	for _, m := range t.Sorted() {
		lat := map[string]any{"samples": m.Latency.Len(), "maxMs": nil}
		if m.Latency.Len() > 0 {
			lat["maxMs"] = ms(m.Latency.Max())
		}
		for _, p := range capture.Percentiles {
			lat[p.Name+"Ms"] = nil
			if d, ok := m.Latency.At(p); ok {
				lat[p.Name+"Ms"] = ms(d)
			}
		}
		out.Methods = append(out.Methods, methodStatsJSON{Method: m.Method, Messages: m.Messages, Requests: m.Requests,
			Notifications: m.Notifications, Errors: m.Errors, BytesToAgent: m.BytesToAgent, BytesToClient: m.BytesToClient, Latency: lat})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// ms is a duration in milliseconds, as JSONL's latencyMs gives it.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
