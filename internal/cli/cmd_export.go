package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/har"
	"github.com/acpscope/acpscope/replay"
	"github.com/acpscope/acpscope/report"
	flag "github.com/spf13/pflag"
)

// exportHelp is `acpscope export`'s synopsis, examples and flags.
func exportHelp() help {
	return help{
		usage: "CAPTURE [--session S] -o FILE [--format capture|jsonl|html|har|mermaid|otlp|otlp-json] [--redact PATH]… [--redact-re REGEX]…",
		example: `  acpscope export latest --session 0f3c… -o bug.acpscope
  acpscope export latest --format html -o report.html    # one file that opens in any browser, offline
  acpscope export latest --format har -o session.har     # HTTP captures: for the devtools network panel
  acpscope export latest --format jsonl -o - | jq .
  acpscope export latest --format mermaid -o flow.mmd
  acpscope export latest -o bug.acpscope --redact 'params.prompt.*.text' --redact-re 'acct-[0-9]+'
  acpscope export latest --format otlp --otlp-endpoint http://localhost:4318   # spans to a collector
  acpscope export latest --format otlp-json -o spans.jsonl                     # OTLP JSON, one request per line`,
		setup: func(fs *flag.FlagSet) {
			fs.String("dir", "", "capture directory (default $ACPSCOPE_DIR or ~/.local/state/acpscope/captures)")
			fs.String("session", "", "the session to export (required when the capture holds several, but for html and har, which show them all)")
			fs.StringP("output", "o", "", "output file (required for --format capture); the other formats go to stdout by default")
			fs.String("format", "capture", "capture (a single-session capture file), jsonl, html (a self-contained report), har (HTTP captures), mermaid, otlp (spans to a collector) or otlp-json")
			otlpExportFlags(fs)
			fs.StringArray("redact", nil, "also redact values at this JSON path (glob: * one segment, ** any)")
			fs.StringArray("redact-re", nil, "also redact text matching this regular expression")
			fs.Bool("no-redact", false, "keep secrets (API keys, tokens, env values) in the export: never attach such a file publicly")
		},
	}
}

func runExport(fs *flag.FlagSet, args []string) (int, error) {
	copyingHeap()
	if len(args) != 1 {
		return 2, usageErrorf("expected one CAPTURE, got %q", args)
	}
	out, _ := fs.GetString("output")
	format, _ := fs.GetString("format")
	switch {
	case out == "" && format != "capture":
		out = "-" // text formats go to stdout, ready for a pipe or a redirect
	case out == "":
		return 2, usageErrorf("say where to write the capture file with -o FILE")
	}
	if format == "capture" && out == "-" {
		return 2, usageErrorf("a capture file cannot go to stdout; use -o FILE, or --format jsonl")
	}
	path, err := resolveCapture(fs, args[0])
	if err != nil {
		return captureErrCode(err), err
	}
	src, err := capture.Open(path)
	if errors.Is(err, capture.ErrLive) {
		return 2, fmt.Errorf("%s is still being written by a running proxy: export it once its agent has exited (`acpscope dump` reads it now)", path)
	}
	if err != nil {
		return captureErrCode(err), err
	}
	defer src.Close()
	opts := capture.ExportOptions{SourceName: filepath.Base(path)}
	opts.Session, _ = fs.GetString("session")
	opts.NoRedact, _ = fs.GetBool("no-redact")
	opts.Redact.Paths, _ = fs.GetStringArray("redact")
	opts.Redact.Patterns, _ = fs.GetStringArray("redact-re")
	opts.Progress = func(done, total uint64) {
		fmt.Fprintf(os.Stderr, "\racpscope export: %d/%d records", done, total)
	}
	if opts.NoRedact {
		fmt.Fprintln(os.Stderr, "acpscope export: WARNING: --no-redact: this export keeps every secret that was on the wire (API keys, tokens, MCP env values, auth headers). Do not attach it to a public issue.")
	}
	if format == "otlp" || format == "otlp-json" {
		return exportSpans(fs, src, format, out, opts)
	}
	var res capture.ExportResult
	if format == "capture" {
		res, err = capture.Export(src, out, opts)
	} else if export, ok := streamFormats[format]; ok {
		err = writeOutput(out, func(w io.Writer) error {
			var e error
			res, e = export(src, w, opts)
			return e
		})
	} else {
		return 2, usageErrorf("unknown --format %q (want capture, jsonl, html, har, mermaid, otlp or otlp-json)", format)
	}
	if errors.Is(err, har.ErrNotHTTP) {
		return 2, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if errors.Is(err, iofs.ErrExist) {
		return 2, fmt.Errorf("%s already exists: export does not overwrite; choose another -o, or remove it first", out)
	}
	if errors.Is(err, capture.ErrBadOption) || errors.Is(err, capture.ErrManySessions) {
		return 2, usageErrorf("%v", err)
	}
	if err != nil {
		return 1, err
	}
	reportRedactions(os.Stderr, res, opts, format, out)
	return 0, nil
}

// streamFormats are the export formats written to a stream: a new file
// (-o FILE) or stdout (-o -, the default).
var streamFormats = map[string]func(capture.Source, io.Writer, capture.ExportOptions) (capture.ExportResult, error){
	"jsonl": capture.ExportJSONL,
	"html":  report.Export,
	"har":   har.Export,
	"mermaid": func(src capture.Source, w io.Writer, opts capture.ExportOptions) (capture.ExportResult, error) {
		return capture.ExportResult{}, replay.ExportMermaid(src, w, opts)
	},
}

// writeOutput runs write on stdout for "-", else on a new 0600 file.
func writeOutput(out string, write func(io.Writer) error) error {
	if out == "-" {
		return write(os.Stdout)
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating %q: %w (remove it or choose another name)", out, err)
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(out)
		return err
	}
	return f.Close()
}

// reportRedactions tells what was redacted: paths and seqs, never values.
func reportRedactions(w io.Writer, res capture.ExportResult, opts capture.ExportOptions, format, out string) {
	if opts.Progress != nil && res.Records >= 5000 {
		fmt.Fprintln(w)
	}
	var b bytes.Buffer
	if format != "mermaid" {
		fmt.Fprintf(&b, "acpscope export: wrote %d records", res.Records)
		if res.Session != "" {
			fmt.Fprintf(&b, " of session %s", res.Session)
		}
		if out != "-" {
			fmt.Fprintf(&b, " to %s", out)
		}
		b.WriteString("\n")
	}
	if !opts.NoRedact && format != "mermaid" {
		fmt.Fprintf(&b, "acpscope export: redacted %s", replay.Count(len(res.Redactions), "value", "values"))
		if len(res.Redactions) > 0 {
			b.WriteString(":")
		}
		b.WriteString("\n")
		for _, r := range res.Redactions {
			fmt.Fprintf(&b, "  #%-6d %-50s %s\n", r.Seq, r.Path, r.Rule)
		}
		if len(res.Redactions) > 0 {
			b.WriteString("  (check the file before attaching it; add --redact PATH or --redact-re REGEX for anything missed)\n")
		}
	}
	if b.Len() > 0 {
		io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	}
}
