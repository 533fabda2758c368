package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/replay"
	flag "github.com/spf13/pflag"
)

// tailHelp is `acpscope tail`'s synopsis, examples and flags.
func tailHelp() help {
	return help{
		usage: "[CAPTURE] [-F] [--agent NAME] [-n N] [--format table|jsonl] [--filter EXPR]",
		example: `  acpscope tail
  acpscope tail -F -n 0 --filter 'kind:error or kind:invalid or kind:stderr'
  acpscope tail -F --agent claude-code-acp       # across the editor's restarts of that agent
  acpscope tail -F --format jsonl | jq -c .method   # stdout stays JSONL; capture changes go to stderr`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.IntP("lines", "n", 10, "show this many earlier records first")
			fs.BoolP("follow-name", "F", false, "when the capture ends, wait for the next one (the editor restarted the agent) and follow it; with no live capture, wait for one; until Ctrl-C")
			fs.Bool("wait", false, "the same as --follow-name")
			fs.String("agent", "", "only captures of the agent `NAME`, as ls shows it (* and ? match any characters)")
			fs.String("format", "table", "table or jsonl")
			fs.StringP("filter", "f", "", "only records matching this filter expression ('acpscope tail --help-filter')")
			fs.Bool("help-filter", false, "print the filter language and exit")
			oldFormatFlag(fs)
		},
	}
}

func runTail(fs *flag.FlagSet, args []string) (int, error) {
	if help, _ := fs.GetBool("help-filter"); help {
		fmt.Print(capture.FilterGrammar)
		return 0, nil
	}
	formatFromOutput(fs, os.Stderr, []string{"table", "jsonl"})
	if out, _ := fs.GetString("output"); out != "" {
		return 2, usageErrorf("tail prints to stdout as records arrive: to keep them in a file, redirect it (> %s) or pipe it through tee", out)
	}
	format, _ := fs.GetString("format")
	if format != "table" && format != "jsonl" {
		return 2, usageErrorf("unknown --format %q: use table or jsonl", format)
	}
	lines, _ := fs.GetInt("lines")
	if lines < 0 {
		return 2, usageErrorf("-n/--lines %d: give the number of earlier records to show, 0 or more", lines)
	}
	agent, _ := fs.GetString("agent")
	if _, err := path.Match(agent, ""); err != nil {
		return 2, usageErrorf("--agent %q: %v", agent, err)
	}
	filter, err := parseFilterFlag(fs)
	if err != nil {
		return 2, err
	}
	p := newTailPrinter(format, filter)
	followName, _ := fs.GetBool("follow-name")
	if wait, _ := fs.GetBool("wait"); wait || followName {
		return tailFollowName(fs, args, p, lines)
	}
	src, _, code, err := openFiltered(fs, args, tailTarget, capture.OpenSource)
	if err != nil {
		return code, err
	}
	defer src.Close()
	from, err := tailFrom(src, lines, filter != nil)
	if err != nil {
		return 0, err
	}
	_, isLive := src.(*capture.Live)
	ctx := context.Background()
	if isLive {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
	}
	p.header()
	end, err := p.follow(ctx, src, from)
	if err != nil || !isLive {
		return 0, err
	}
	return 0, reportEnd(end, false)
}

// tailFrom is the first record to print of src for -n lines: of a live
// capture, counted back from where it stood when its feed answered (the
// backlog may still be arriving); of a finished one, from its end, said
// on stderr.
func tailFrom(src capture.Source, lines int, filtered bool) (uint64, error) {
	last := src.Last()
	live, isLive := src.(*capture.Live)
	if isLive {
		last = live.LastAtOpen()
	}
	from := uint64(1)
	if last > uint64(lines) {
		from = last - uint64(lines) + 1
	}
	if isLive {
		return from, nil
	}
	if lines == 0 {
		return 0, errors.New("the capture is finished and -n 0 asks for none of its records: give -n N, follow the next capture with -F, or print it all with `acpscope dump`")
	}
	if last == 0 {
		return 0, errors.New("the capture is finished and holds no records")
	}
	shown := "showing its last " + replay.Count(int(last-from+1), "record", "records")
	if filtered {
		shown += " that match the filter"
	}
	fmt.Fprintf(os.Stderr, "acpscope tail: the capture is finished; %s\n", shown)
	return from, nil
}

// tailTarget picks the capture to follow: the one named, or the newest
// live one (of --agent's agent), or failing that the newest that opens.
func tailTarget(fs *flag.FlagSet, args []string) (string, error) {
	if len(args) > 0 {
		return oneCapture(fs, args)
	}
	dir, infos, err := listCaptures(fs)
	if err != nil {
		return "", err
	}
	agent, _ := fs.GetString("agent")
	match := agentMatch(agent)
	if in, ok := newestLive(infos, match); ok {
		return in.Path, nil
	}
	if len(infos) == 0 {
		return "", fmt.Errorf("%w: there are no captures in %s yet: start an agent through 'acpscope -- AGENT CMD…' first, or wait for one with 'acpscope tail -F'", capture.ErrNotFound, dir)
	}
	if match == nil {
		return capture.Resolve(dir, "latest") // the newest that opens
	}
	for _, in := range infos {
		if in.Err == nil && match(in) {
			return in.Path, nil
		}
	}
	return "", fmt.Errorf("%w: no capture of agent %q in %s: 'acpscope ls' shows the agents, 'acpscope tail -F --agent %s' waits for one", capture.ErrNotFound, agent, dir, shellQuote(agent))
}

// agentMatch matches captures of an agent by name, as ls shows it; nil
// for no --agent.
func agentMatch(pattern string) func(capture.Info) bool {
	if pattern == "" {
		return nil
	}
	return func(in capture.Info) bool {
		ok, _ := path.Match(pattern, in.Meta.Agent)
		return ok
	}
}

// newestLive returns the newest live capture of infos (newest first)
// that match lets through.
func newestLive(infos []capture.Info, match func(capture.Info) bool) (capture.Info, bool) {
	for _, in := range infos {
		if in.Live && (match == nil || match(in)) {
			return in, true
		}
	}
	return capture.Info{}, false
}

// tailPrinter prints records as tail shows them: rows arrive a few at a
// time, so table columns are padded to fixed widths (a tabwriter would
// align each batch on its own).
type tailPrinter struct {
	w      *bufio.Writer
	tw     *fixedColumns
	write  recordWriter
	table  bool
	filter *capture.Filter
}

func newTailPrinter(format string, filter *capture.Filter) *tailPrinter {
	w := bufio.NewWriter(os.Stdout)
	return &tailPrinter{w: w, tw: &fixedColumns{w: w, widths: tailWidths}, write: dumpFormats[format](),
		table: format == "table", filter: filter}
}

// header prints the table's column names.
func (p *tailPrinter) header() {
	if p.table {
		fmt.Fprintln(p.tw, rowHeader)
	}
}

// follow prints src's records from seq from on; with a live source it
// keeps printing as they arrive until the proxy finishes or ctx ends.
func (p *tailPrinter) follow(ctx context.Context, src capture.Source, from uint64) (capture.FollowEnd, error) {
	end, err := capture.Follow(ctx, src, capture.FollowOptions{
		From:      from,
		HoldLimit: tailHoldLimit,
		Record: func(rec *capture.Record) error {
			if p.filter != nil && !p.filter.MatchIn(src, rec, func() []byte { return rec.Body }) {
				return nil
			}
			return p.write(p.w, p.tw, rec)
		},
		CaughtUp: p.w.Flush,
		Resumed: func(at uint64, cause error) {
			fmt.Fprintf(os.Stderr, "acpscope tail: the feed cut tail off (%v); resumed at record %d\n", cause, at)
		},
	})
	if ferr := p.w.Flush(); err == nil {
		err = ferr
	}
	return end, err
}

// reportEnd says on stderr how a followed live capture ended; with
// waiting (-F), that tail goes on to the next.
func reportEnd(end capture.FollowEnd, waiting bool) error {
	next := ""
	if waiting {
		next = "; waiting for the next capture (Ctrl-C to stop)"
	}
	switch end {
	case capture.FollowFinished:
		fmt.Fprintf(os.Stderr, "acpscope tail: the proxy finished%s\n", next)
	case capture.FollowFromFile:
		fmt.Fprintf(os.Stderr, "acpscope tail: the proxy finished; the records tail had not caught up with were read from the file%s\n", next)
	case capture.FollowUnfinished:
		const why = "the proxy stopped without finishing its capture (was it killed?); the records it committed were printed from the file"
		if !waiting {
			return errors.New(why)
		}
		fmt.Fprintf(os.Stderr, "acpscope tail: %s%s\n", why, next)
	}
	return nil
}

// tailHoldLimit bounds what tail holds of a live feed that runs ahead
// of its printing; the proxy's feed waits for it meanwhile.
const tailHoldLimit = 32 << 20

// tailWidths are the column widths of tail's table, wide enough for most
// values: SEQ, TIME, DIR, KIND, ID, METHOD, SESSION, SIZE, LATENCY.
var tailWidths = []int{5, 12, 3, 12, 4, 48, 12, 9, 0}

// fixedColumns pads the tab-separated cells of each line it is given to
// fixed widths (a cell longer than its width pushes the rest of its line
// right, and the next line is aligned again).
type fixedColumns struct {
	w      io.Writer
	widths []int
	line   []byte
}

func (f *fixedColumns) Write(p []byte) (int, error) {
	for _, c := range p {
		if c != '\n' {
			f.line = append(f.line, c)
			continue
		}
		if _, err := f.w.Write(padCells(f.line, f.widths)); err != nil {
			return 0, err
		}
		f.line = f.line[:0]
	}
	return len(p), nil
}

func padCells(line []byte, widths []int) []byte {
	var out []byte
	for i, cell := range strings.Split(string(line), "\t") {
		if i > 0 {
			out = append(out, ' ', ' ')
		}
		out = append(out, cell...)
		if i < len(widths) && widths[i] > 0 {
			for n := utf8.RuneCountInString(cell); n < widths[i]; n++ {
				out = append(out, ' ')
			}
		}
	}
	return append(bytes.TrimRight(out, " "), '\n')
}
