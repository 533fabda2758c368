package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/replay"
	flag "github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "tail",
		usage:   "[CAPTURE] [-n N] [--format table|jsonl] [--filter EXPR]",
		summary: "follow a live capture message by message (the newest live one by default)",
		example: `  acpscope tail
  acpscope tail -n 0 --filter 'kind:error or kind:invalid or kind:stderr'
  acpscope tail --format jsonl | jq -c .method`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.IntP("lines", "n", 10, "show this many earlier records first")
			fs.StringP("format", "o", "table", "table or jsonl")
			fs.StringP("filter", "f", "", "only records matching this filter expression ('acpscope tail --help-filter')")
			fs.Bool("help-filter", false, "print the filter language and exit")
		},
		run: runTail,
	})
}

func runTail(fs *flag.FlagSet, args []string) (int, error) {
	if help, _ := fs.GetBool("help-filter"); help {
		fmt.Print(capture.FilterGrammar)
		return 0, nil
	}
	format, _ := fs.GetString("format")
	if format != "table" && format != "jsonl" {
		return 2, usageErrorf("unknown --format %q: use table or jsonl%s", format, formatNotFileHint(format))
	}
	lines, _ := fs.GetInt("lines")
	if lines < 0 {
		return 2, usageErrorf("-n/--lines %d: give the number of earlier records to show, 0 or more", lines)
	}
	src, filter, code, err := openFiltered(fs, args, tailTarget, capture.OpenSource)
	if err != nil {
		return code, err
	}
	defer src.Close()
	live, isLive := src.(*capture.Live)
	last := src.Last()
	if isLive {
		// The backlog may still be arriving: count back from where the
		// capture stood when its feed answered.
		last = live.LastAtOpen()
	}
	from := uint64(1)
	if last > uint64(lines) {
		from = last - uint64(lines) + 1
	}
	if !isLive {
		if lines == 0 {
			return 0, errors.New("the capture is finished and -n 0 asks for none of its records: give -n N, or print it all with `acpscope dump`")
		}
		if last == 0 {
			return 0, errors.New("the capture is finished and holds no records")
		}
		shown := "showing its last " + replay.Count(int(last-from+1), "record", "records")
		if filter != nil {
			shown += " that match the filter"
		}
		fmt.Fprintf(os.Stderr, "acpscope tail: the capture is finished; %s\n", shown)
	}
	return 0, followRecords(src, live, format, filter, from)
}

// tailTarget picks the capture to follow: the one named, or the newest
// live one, or failing that the newest that opens.
func tailTarget(fs *flag.FlagSet, args []string) (string, error) {
	if len(args) > 0 {
		return oneCapture(fs, args)
	}
	dir, infos, err := listCaptures(fs)
	if err != nil {
		return "", err
	}
	for _, in := range infos {
		if in.Live {
			return in.Path, nil
		}
	}
	if len(infos) == 0 {
		return "", fmt.Errorf("%w: there are no captures in %s yet: start an agent through 'acpscope -- AGENT CMD…' first", capture.ErrNotFound, dir)
	}
	return capture.Resolve(dir, "latest") // the newest that opens
}

// followRecords prints records from seq from on; with a live source it
// keeps printing as they arrive until the proxy finishes or Ctrl-C.
func followRecords(src capture.Source, live *capture.Live, format string, filter *capture.Filter, from uint64) error {
	w := bufio.NewWriter(os.Stdout)
	// Rows arrive a few at a time, so columns are padded to fixed widths
	// (a tabwriter would align each batch on its own).
	tw := &fixedColumns{w: w, widths: tailWidths}
	write := dumpFormats[format]()
	if format == "table" {
		fmt.Fprintln(tw, rowHeader)
	}
	next := from
	printFrom := func(src capture.Source) error {
		for ; next <= src.Last(); next++ {
			rec, err := src.Record(next)
			if errors.Is(err, capture.ErrNoRecord) {
				continue // a hole: the proxy could not commit it, and said so
			}
			if err != nil {
				return err
			}
			if rec.Body, err = src.Body(next); err != nil {
				return err
			}
			if filter == nil || filter.Match(&rec, func() []byte { return rec.Body }) {
				if err := write(w, tw, &rec); err != nil {
					return err
				}
			}
		}
		if live != nil {
			live.Discard(next) // printed: a long session must not pile up here
		}
		return w.Flush()
	}
	if live != nil {
		live.SetHoldLimit(tailHoldLimit)
	}
	printNew := func() error { return printFrom(src) }
	if err := printNew(); err != nil || live == nil {
		return err
	}
	defer func() { live.Close() }() // the one in use when tail ends
	resumedAt := uint64(0)
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	for {
		select {
		case _, open := <-live.Updates():
			if err := printNew(); err != nil {
				return err
			}
			if open {
				continue
			}
			if live.Err() != nil && next > resumedAt {
				// Cut off (tail was stopped, say by a paused pager, and
				// the proxy gave up on it): if the proxy still runs,
				// carry on from the first record not yet printed. Only
				// after progress, so a feed that keeps failing ends it.
				resumedAt = next
				if again, err := capture.DialLive(live.Path(), next); err == nil {
					fmt.Fprintf(os.Stderr, "acpscope tail: the feed cut tail off (%v); resumed at record %d\n", live.Err(), next)
					live.Close()
					live, src = again, again
					live.SetHoldLimit(tailHoldLimit)
					continue
				}
			}
			return liveEnd(live, printFrom)
		case <-interrupt:
			return nil
		}
	}
}

// tailHoldLimit bounds what tail holds of a live feed that runs ahead
// of its printing; the proxy's feed waits for it meanwhile.
const tailHoldLimit = 32 << 20

// liveEnd finishes tail when the feed ends. A feed cut short (tail fell
// behind when the proxy exited, or the proxy was killed) still leaves the
// file: what tail had not printed is read from there.
func liveEnd(live *capture.Live, printFrom func(capture.Source) error) error {
	err := live.Err()
	if err == nil || errors.Is(err, capture.ErrClosed) {
		fmt.Fprintln(os.Stderr, "acpscope tail: the proxy finished")
		return nil
	}
	rest, openErr := openWhenReleased(live.Path())
	if openErr != nil {
		return fmt.Errorf("live feed ended: %w", err)
	}
	defer rest.Close()
	if err := printFrom(rest); err != nil {
		return err
	}
	if rest.Meta().End.IsZero() {
		return fmt.Errorf("the proxy stopped without finishing its capture (was it killed?); the records it committed were printed from the file")
	}
	fmt.Fprintln(os.Stderr, "acpscope tail: the proxy finished; the records tail had not caught up with were read from the file")
	return nil
}

// openWhenReleased opens a capture whose proxy is finishing: its feed is
// gone but the file stays locked until the last commit is written.
func openWhenReleased(path string) (*capture.Reader, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := capture.Open(path)
		if !errors.Is(err, capture.ErrLive) || time.Now().After(deadline) {
			return r, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tailWidths are the column widths of tail's table, wide enough for most
// values: SEQ, TIME, DIR, KIND, ID, METHOD, SESSION, SIZE, LATENCY.
var tailWidths = []int{5, 12, 3, 12, 4, 48, 12, 7, 0}

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
