package cli

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	flag "github.com/spf13/pflag"
)

// importHelp is `acpscope import`'s synopsis, examples and flags.
func importHelp() help {
	return help{
		usage: "FILE [-o CAPTURE]",
		example: `  acpscope import bug.acpscope                 # a capture someone attached to an issue
  acpscope import session.jsonl -o s.acpscope   # {"dir":"client","msg":{…}} per line
  acpscope import goose-1.37.0.json             # an acp-devtools export
  acpscope import trace.jsons                   # a conductor's --trace file, one connection per link
  acpscope import acp-trace-1785312000123.jsonl # an acp-inspector trace export`,
		setup: func(fs *flag.FlagSet) {
			fs.String("dir", "", "capture directory (default $ACPSCOPE_DIR or ~/.local/state/acpscope/captures)")
			fs.StringP("output", "o", "", "the new capture's path (default: a new file in the capture directory)")
		},
	}
}

func runImport(fs *flag.FlagSet, args []string) (int, error) {
	copyingHeap()
	if len(args) != 1 {
		return 2, usageErrorf("expected one FILE, got %q", args)
	}
	out, _ := fs.GetString("output")
	if out == "" {
		dir, _ := fs.GetString("dir")
		if dir == "" {
			var err error
			if dir, err = capture.DefaultDir(); err != nil {
				return 2, err
			}
		}
		name := strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
		out = filepath.Join(dir, capture.NewName("import-"+name, time.Now(), os.Getpid()))
	}
	res, err := capture.Import(args[0], out)
	if errors.Is(err, iofs.ErrExist) {
		return 2, fmt.Errorf("%s already exists: choose another -o, or remove it first", out)
	}
	if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, capture.ErrUnknownFormat) {
		return 2, err
	}
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "acpscope import: %d records from %s (%s)\n", res.Records, args[0], res.Format)
	fmt.Println(out)
	return 0, nil
}
