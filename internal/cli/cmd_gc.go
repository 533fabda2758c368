package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	flag "github.com/spf13/pflag"
)

// gcHelp is `acpscope gc`'s synopsis, examples and flags.
func gcHelp() help {
	return help{
		usage: "[--older-than DURATION] [--max-total SIZE] [--dry-run]",
		example: `  acpscope gc --dry-run
  acpscope gc --older-than 7d --max-total 500MB`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			durationFlag(fs, "older-than", 30*human.Day, "delete finished captures started (or imported) longer ago than this")
			fs.String("max-total", "2GiB", "then delete the oldest finished captures until the rest fit in this size")
			fs.Bool("dry-run", false, "say what would be deleted, delete nothing")
		},
	}
}

func runGC(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) > 0 {
		return 2, usageErrorf("gc takes no arguments, got %q", args)
	}
	maxAge, _ := fs.GetDuration("older-than")
	maxTotalText, _ := fs.GetString("max-total")
	maxTotal, err := human.ParseSize(maxTotalText)
	if err != nil {
		return 2, usageErrorf("--max-total: %v", err)
	}
	dryRun, _ := fs.GetBool("dry-run")
	dir, infos, err := listCaptures(fs)
	if err != nil {
		return 1, err
	}
	doomed := capture.Retention{MaxAge: maxAge, MaxTotal: maxTotal}.ToDelete(infos, time.Now())
	var freed int64
	deleted := 0
	for _, in := range doomed {
		verb := "deleted"
		if dryRun {
			verb = "would delete"
		} else if err := os.Remove(in.Path); err != nil {
			fmt.Fprintf(os.Stderr, "acpscope gc: %v\n", err)
			continue
		}
		freed += in.Size
		deleted++
		fmt.Printf("%s %s (%s)\n", verb, filepath.Base(in.Path), human.Size(in.Size))
	}
	fmt.Fprintln(os.Stderr, "acpscope gc: "+gcSummary(dryRun, deleted, len(infos), freed))
	if !dryRun {
		if n := capture.SweepSockets(dir); n > 0 {
			fmt.Fprintf(os.Stderr, "acpscope gc: removed %d live-feed sockets left by proxies that were killed\n", n)
		}
	}
	return 0, nil
}

// gcSummary is gc's last line: what it deleted, or would have.
func gcSummary(dryRun bool, n, of int, size int64) string {
	verb := "deleted"
	if dryRun {
		verb = "would delete"
	}
	return fmt.Sprintf("%s %d of %d captures, %s", verb, n, of, human.Size(size))
}
