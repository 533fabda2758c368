package cli

// Helpers shared by the subcommands: finding captures, reading duration
// flags, printing record rows the same way everywhere.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	flag "github.com/spf13/pflag"
)

// captureDirFlag declares --dir, shared by every command that finds
// captures by name.
func captureDirFlag(fs *flag.FlagSet) {
	fs.String("dir", "", "capture directory (default $ACPSCOPE_DIR or ~/.local/state/acpscope/captures)")
}

// captureDir returns the directory --dir names, or the default.
func captureDir(fs *flag.FlagSet) (string, error) {
	if dir, _ := fs.GetString("dir"); dir != "" {
		return dir, nil
	}
	return capture.DefaultDir()
}

// listCaptures lists the captures in the --dir directory, newest first.
func listCaptures(fs *flag.FlagSet) (dir string, infos []capture.Info, err error) {
	if dir, err = captureDir(fs); err != nil {
		return dir, nil, err
	}
	infos, err = capture.List(dir)
	return dir, infos, err
}

// resolveCapture turns a name the user typed into a capture path.
func resolveCapture(fs *flag.FlagSet, name string) (string, error) {
	dir, err := captureDir(fs)
	if err != nil {
		return "", err
	}
	return capture.Resolve(dir, name)
}

// oneCapture takes the single CAPTURE argument, defaulting to the newest.
func oneCapture(fs *flag.FlagSet, args []string) (string, error) {
	switch len(args) {
	case 0:
		return resolveCapture(fs, "latest")
	case 1:
		return resolveCapture(fs, args[0])
	}
	return "", usageErrorf("expected one CAPTURE, got %d arguments: %q", len(args), args)
}

// captureRef is how to name the capture at path in a command the user
// will copy: its file name when it lies in the default capture directory,
// where names resolve from any working directory, else its full path.
func captureRef(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return shellQuote(path)
	}
	if def, err := capture.DefaultDir(); err == nil {
		if defAbs, err := filepath.Abs(def); err == nil && filepath.Dir(abs) == defAbs {
			return shellQuote(filepath.Base(abs))
		}
	}
	return shellQuote(abs)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// captureErrCode is the exit code for failing to find or open a capture:
// 2 when the user named one that does not exist, or too many, or none
// where one was needed; 1 when the capture itself cannot be read.
func captureErrCode(err error) int {
	if errors.Is(err, errUsage) || errors.Is(err, capture.ErrNotFound) || errors.Is(err, capture.ErrAmbiguous) {
		return 2
	}
	return 1
}

// durationFlag declares a duration flag that reads days and weeks too
// (7d, 2w) and shows its default as a person writes it (30d). Every
// duration flag of every command is declared through it; fs.GetDuration
// reads it (see human.DurationFlag).
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) {
	fs.Var(human.NewDurationFlag(value), name, usage)
	fs.Lookup(name).DefValue = human.Duration(value)
}

// rangedDurationFlag is durationFlag for a value that must lie within
// [lo, hi]: one outside is refused while the command line is read, so a
// mistyped window stops the command before it starts anything.
func rangedDurationFlag(fs *flag.FlagSet, name string, value, lo, hi time.Duration, usage string) {
	fs.Var(&rangedDuration{DurationFlag: human.NewDurationFlag(value), lo: lo, hi: hi}, name, usage)
	fs.Lookup(name).DefValue = human.Duration(value)
}

type rangedDuration struct {
	*human.DurationFlag
	lo, hi time.Duration
}

func (r *rangedDuration) Set(s string) error {
	d, err := human.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < r.lo || d > r.hi {
		return fmt.Errorf("%s is outside the range %s to %s", s, human.Duration(r.lo), human.Duration(r.hi))
	}
	*r.DurationFlag = human.DurationFlag(d)
	return nil
}

// rowHeader and writeRow print records as one table everywhere.
const rowHeader = "SEQ\tTIME\tDIR\tKIND\tID\tMETHOD\tSESSION\tSIZE\tLATENCY"

func writeRow(w io.Writer, r *capture.Record) {
	if exchange, ok := r.HTTP.Exchange(); ok {
		writeExchangeRow(w, r, exchange)
		return
	}
	method := r.Method
	if r.Kind == wire.KindStderr || r.Kind == wire.KindNonProtocol || r.Kind == wire.KindInvalidJSON || r.Kind == wire.KindInvalidUTF8 {
		method = preview(r.Body, 48)
	}
	if r.Method == "session/update" && r.Kind == wire.KindNotification {
		if update := protocol.UpdateKind(r.Body); update != "" {
			method += " " + update
		}
	}
	if mcp, ok := protocol.DecodeMCP(&r.Msg); ok {
		method += " " + mcp.Summary()
	}
	if r.ErrorCode != 0 {
		method += fmt.Sprintf(" (%d)", r.ErrorCode)
	}
	if hop := protocol.HopLabel(r.Hop); hop != "" {
		method += " " + hop
	}
	method += faultTag(r.Fault)
	latency := ""
	if r.Latency > 0 {
		latency = human.Duration(r.Latency)
	}
	flags := ""
	if names := r.Flags.Names(); len(names) > 0 {
		flags = " [" + strings.Join(names, ",") + "]"
	}
	fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
		r.Seq, r.When().Local().Format("15:04:05.000"), arrow(r), r.Kind.String()+flags,
		string(r.ID), method, human.ShortID(r.Session), human.Size(r.Size), latency)
}

// writeExchangeRow prints a status-only HTTP exchange (a 202 to a POST,
// a stream opened): no message crossed, so the row says what did, and the
// start of a body such as a 502's text.
func writeExchangeRow(w io.Writer, r *capture.Record, exchange string) {
	if len(r.Body) > 0 {
		exchange += " " + preview(r.Body, 40)
	}
	fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
		r.Seq, r.When().Local().Format("15:04:05.000"), arrow(r), "http", "", exchange, human.ShortID(r.Session), human.Size(r.Size), "")
}

// faultTag marks in a row what acpscope did to the message: "⚑ dropped
// by drop-cancel", "⚑ forwarded by intercept". Nothing acpscope changed is
// shown as if it had crossed unchanged.
func faultTag(f *protocol.Fault) string {
	if f == nil {
		return ""
	}
	by := f.Rule
	if by == "" {
		by = f.By
	}
	return fmt.Sprintf("  ⚑ %s %s by %s", f.Stage, f.Action, by)
}

func arrow(r *capture.Record) string {
	if r.Kind == wire.KindStderr {
		return "err"
	}
	if r.Dir == wire.DirAgent {
		return "←"
	}
	return "→"
}

// preview shows the start of a body on one line, escapes visible.
func preview(b []byte, max int) string {
	if len(b) > max {
		b = b[:max]
	}
	q := strconv.Quote(string(b))
	return q[1 : len(q)-1]
}

// closeCapture finishes a capture; the writer itself has already said on
// stderr what it lost, if anything.
func closeCapture(w *capture.Writer) {
	if err := w.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "acpscope: closing capture %s: %v\n", w.Path(), err)
	}
}
