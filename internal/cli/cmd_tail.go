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
	"strings"
	"unicode/utf8"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/replay"
	flag "github.com/spf13/pflag"
)

// tailHelp is `acpscope tail`'s synopsis, examples and flags.
func tailHelp() help {
	return help{
		usage: "[CAPTURE] [-n N] [--format table|jsonl] [--filter EXPR]",
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
	}
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
	return 0, followRecords(src, format, filter, from)
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
func followRecords(src capture.Source, format string, filter *capture.Filter, from uint64) error {
	w := bufio.NewWriter(os.Stdout)
	// Rows arrive a few at a time, so columns are padded to fixed widths
	// (a tabwriter would align each batch on its own).
	tw := &fixedColumns{w: w, widths: tailWidths}
	write := dumpFormats[format]
	if format == "table" {
		fmt.Fprintln(tw, rowHeader)
	}
	_, isLive := src.(*capture.Live)
	ctx := context.Background()
	if isLive {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
	}
	end, err := capture.Follow(ctx, src, capture.FollowOptions{
		From:      from,
		HoldLimit: tailHoldLimit,
		Record: func(rec *capture.Record) error {
			if filter != nil && !filter.Match(rec, func() []byte { return rec.Body }) {
				return nil
			}
			return write(w, tw, rec)
		},
		CaughtUp: w.Flush,
		Resumed: func(at uint64, cause error) {
			fmt.Fprintf(os.Stderr, "acpscope tail: the feed cut tail off (%v); resumed at record %d\n", cause, at)
		},
	})
	if err != nil || !isLive {
		return err
	}
	switch end {
	case capture.FollowFinished:
		fmt.Fprintln(os.Stderr, "acpscope tail: the proxy finished")
	case capture.FollowFromFile:
		fmt.Fprintln(os.Stderr, "acpscope tail: the proxy finished; the records tail had not caught up with were read from the file")
	case capture.FollowUnfinished:
		return errors.New("the proxy stopped without finishing its capture (was it killed?); the records it committed were printed from the file")
	}
	return nil
}

// tailHoldLimit bounds what tail holds of a live feed that runs ahead
// of its printing; the proxy's feed waits for it meanwhile.
const tailHoldLimit = 32 << 20

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
