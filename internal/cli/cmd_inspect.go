package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/inspector"
	flag "github.com/spf13/pflag"
)

// inspectHelp is `acpscope inspect`'s synopsis, examples and flags.
func inspectHelp() help {
	return help{
		usage: "[CAPTURE] [--dir DIR]",
		example: `  acpscope inspect              # the capture library, newest first
  acpscope inspect latest       # the newest capture (live ones scroll as traffic flows)
  acpscope inspect 20261121T1204
  acpscope inspect ./bug-report.acpscope
  inside: ? lists every key; f filters (method:session/prompt or error), / searches, p pairs, c conversation`,
		setup: func(fs *flag.FlagSet) {
			fs.String("dir", "", "capture directory (default $ACPSCOPE_DIR or ~/.local/state/acpscope/captures)")
		},
	}
}

func runInspect(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) > 1 {
		return 2, usageErrorf("expected at most one CAPTURE, got %d arguments", len(args))
	}
	dir, _ := fs.GetString("dir")
	if dir == "" {
		d, err := capture.DefaultDir()
		if err != nil {
			return 1, err
		}
		dir = d
	}
	opts := inspector.Options{Dir: dir}
	if len(args) == 1 {
		path, err := capture.Resolve(dir, args[0])
		if err != nil {
			return captureErrCode(err), err
		}
		opts.Path = path
	}
	if err := inspector.Run(opts); err != nil {
		if errors.Is(err, inspector.ErrNoTerminal) {
			fmt.Fprintln(os.Stderr, "acpscope inspect: needs a terminal on stdin and stdout; without one, print a capture with `acpscope dump [CAPTURE]` or follow a live one with `acpscope tail`")
			return 1, nil
		}
		return 1, err
	}
	return 0, nil
}
