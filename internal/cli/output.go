package cli

// The short flags mean one thing in every command: -o is --output, the
// file a command writes instead of stdout (export, import, dump); -f is
// --filter (dump, tail); -n is tail's --lines. --format has no short
// form. Until this release -o was --format in dump and tail; that
// spelling keeps working for one more release, with a note on stderr.

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"slices"

	flag "github.com/spf13/pflag"
)

// outputFlag declares -o/--output.
func outputFlag(fs *flag.FlagSet, usage string) {
	fs.StringP("output", "o", "", usage)
}

// oldFormatFlag declares the -o of commands that write to stdout only
// (tail): hidden, it exists to recognise the old -o FORMAT.
func oldFormatFlag(fs *flag.FlagSet) {
	outputFlag(fs, "")
	fs.MarkHidden("output")
}

// formatFromOutput recognises -o FORMAT, the old spelling of --format,
// when the value of -o is one of the command's formats and --format was
// not given: it sets --format, clears -o and says on stderr how to write
// it now. A file named like a format can still be written as ./jsonl.
func formatFromOutput(fs *flag.FlagSet, stderr io.Writer, formats []string) {
	out, _ := fs.GetString("output")
	if !slices.Contains(formats, out) || fs.Changed("format") {
		return
	}
	fs.Set("format", out)
	fs.Set("output", "")
	fmt.Fprintf(stderr, "%s: -o %s is deprecated: -o names an output file now, as in export and import; write --format %s (-o FORMAT works until the next release)\n",
		fs.Name(), out, out)
}

// createOutput opens -o's file for writing: new, private (it holds what
// the capture holds), never over an existing file. "" and "-" are stdout.
// done closes the file, and removes it when the command failed, so a
// half-written file is not mistaken for a whole one.
func createOutput(path string) (w io.Writer, done func(failed bool) error, err error) {
	if path == "" || path == "-" {
		return os.Stdout, func(bool) error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, iofs.ErrExist) {
		return nil, nil, usageErrorf("%s already exists: choose another -o, or remove it first", path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("creating the output file: %w", err)
	}
	return f, func(failed bool) error {
		err := f.Close()
		if failed || err != nil {
			os.Remove(path)
		}
		return err
	}, nil
}

// warn says one line on stderr, where a proxy's words go: its stdout
// belongs to the protocol.
func warn(msg string) { fmt.Fprintln(os.Stderr, "acpscope: "+msg) }
