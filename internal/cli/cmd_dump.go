package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/acpscope/acpscope/capture"
	flag "github.com/spf13/pflag"
)

// dumpHelp is `acpscope dump`'s synopsis, examples and flags.
func dumpHelp() help {
	return help{
		usage: "[CAPTURE] [--format table|jsonl|raw] [--filter EXPR] [-o FILE]",
		example: `  acpscope dump latest
  acpscope dump latest --format jsonl | jq -c 'select(.kind=="request" and .method=="session/prompt") | .msg.params'
  acpscope dump 20261121T1204 --filter 'method:session/prompt or error'
  acpscope dump latest --format raw --filter dir:agent -o agent-stdout.ndjson`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.String("format", "table", "table, jsonl (one record per line, see README) or raw (each message's wire bytes on a line of its own, for every transport)")
			fs.StringP("filter", "f", "", "only records matching this filter expression ('acpscope dump --help-filter')")
			fs.Bool("help-filter", false, "print the filter language and exit")
			fs.Uint64("from", 1, "first sequence number")
			fs.Uint64("to", 0, "last sequence number (0: the end)")
			outputFlag(fs, "write to this new `FILE` (mode 0600) instead of stdout")
		},
	}
}

// recordWriter writes one record, its body loaded, to w (or to table,
// the tabwriter over w, for the table format).
type recordWriter func(w *bufio.Writer, table io.Writer, r *capture.Record) error

// dumpFormats make a format's recordWriter, one per run: raw keeps state
// from one record to the next.
var dumpFormats = map[string]func() recordWriter{
	"table": func() recordWriter {
		return func(_ *bufio.Writer, tw io.Writer, r *capture.Record) error {
			writeRow(tw, r)
			return nil
		}
	},
	"jsonl": func() recordWriter {
		return func(w *bufio.Writer, _ io.Writer, r *capture.Record) error {
			_, err := w.Write(append(capture.AppendJSONL(nil, r), '\n'))
			return err
		}
	},
	"raw": func() recordWriter { return new(rawWriter).write },
}

func runDump(fs *flag.FlagSet, args []string) (int, error) {
	if help, _ := fs.GetBool("help-filter"); help {
		fmt.Print(capture.FilterGrammar)
		return 0, nil
	}
	formatFromOutput(fs, os.Stderr, []string{"table", "jsonl", "raw"})
	format, _ := fs.GetString("format")
	newWriter, ok := dumpFormats[format]
	if !ok {
		return 2, usageErrorf("unknown --format %q: use table, jsonl or raw", format)
	}
	from, _ := fs.GetUint64("from")
	to, _ := fs.GetUint64("to")
	if to != 0 && to < from {
		return 2, usageErrorf("--from %d is after --to %d: nothing to print", from, to)
	}
	src, filter, code, err := openFiltered(fs, args, oneCapture, capture.OpenComplete)
	if err != nil {
		return code, err
	}
	defer src.Close()
	path, _ := fs.GetString("output")
	out, done, err := createOutput(path)
	if err != nil {
		return 2, err
	}
	err = dumpRecords(src, out, format, newWriter(), filter, from, to)
	if cerr := done(err != nil); err == nil {
		err = cerr
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// openFiltered parses --filter, then finds the capture pick names and
// opens it with open; the exit code says whose fault a failure is.
// Readers that go through a capture once open it with
// capture.OpenComplete, so a live one holds at least what it held when
// they started; tail follows it with capture.OpenSource.
func openFiltered(fs *flag.FlagSet, args []string, pick func(*flag.FlagSet, []string) (string, error),
	open func(string) (capture.Source, error)) (capture.Source, *capture.Filter, int, error) {
	filter, err := parseFilterFlag(fs)
	if err != nil {
		return nil, nil, 2, err
	}
	path, err := pick(fs, args)
	if err != nil {
		return nil, nil, captureErrCode(err), err
	}
	src, err := open(path)
	if err != nil {
		return nil, nil, captureErrCode(err), pickedNewest(args, err)
	}
	return src, filter, 0, nil
}

// pickedNewest explains a capture that could not be opened when the user
// named none and the newest was chosen for them: they may not know which
// file that was, nor that they can name another.
func pickedNewest(args []string, err error) error {
	if err == nil || len(args) > 0 || errors.Is(err, capture.ErrNotFound) || errors.Is(err, errUsage) {
		return err
	}
	return fmt.Errorf("%w\n(no capture was named, so the newest was chosen; name another one: `acpscope ls` lists them)", err)
}

func parseFilterFlag(fs *flag.FlagSet) (*capture.Filter, error) {
	expr, _ := fs.GetString("filter")
	if expr == "" {
		return nil, nil
	}
	f, err := capture.ParseFilter(expr)
	var fe *capture.FilterError
	if errors.As(err, &fe) { // its own text starts "filter:" too
		return nil, usageErrorf("bad --filter at byte %d: %s ('%s --help-filter' shows the language)", fe.Pos, fe.Msg, fs.Name())
	}
	if err != nil {
		return nil, usageErrorf("bad --filter: %v ('%s --help-filter' shows the language)", err, fs.Name())
	}
	return f, nil
}

func dumpRecords(src capture.Source, out io.Writer, format string, write recordWriter, filter *capture.Filter, from, to uint64) error {
	w := bufio.NewWriterSize(out, 1<<16)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if format == "table" {
		fmt.Fprintln(tw, rowHeader)
	}
	var werr error
	err := src.Scan(from, func(r *capture.Record) bool {
		if to != 0 && r.Seq > to {
			return false
		}
		body, err := src.Body(r.Seq)
		if err != nil {
			werr = err
			return false
		}
		r.Body = body
		if filter != nil && !filter.MatchIn(src, r, func() []byte { return body }) {
			return true
		}
		werr = write(w, tw, r)
		return werr == nil
	})
	if err == nil {
		err = werr
	}
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}
