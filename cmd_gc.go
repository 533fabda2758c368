package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/acpscope/acpscope/capture"
	flag "github.com/spf13/pflag"
)

func init() {
	register(&command{
		name:    "gc",
		usage:   "[--older-than DURATION] [--max-total SIZE] [--dry-run]",
		summary: "delete old captures (never a live one) to keep the capture directory small",
		example: `  acpscope gc --dry-run
  acpscope gc --older-than 168h --max-total 500MB`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.Duration("older-than", 30*24*time.Hour, "delete finished captures started (or imported) longer ago than this")
			fs.String("max-total", "2GiB", "then delete the oldest finished captures until the rest fit in this size")
			fs.Bool("dry-run", false, "say what would be deleted, delete nothing")
		},
		run: runGC,
	})
}

func runGC(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) > 0 {
		return 2, usageErrorf("gc takes no arguments, got %q", args)
	}
	maxAge, _ := fs.GetDuration("older-than")
	maxTotalText, _ := fs.GetString("max-total")
	maxTotal, err := parseSize(maxTotalText)
	if err != nil {
		return 2, usageErrorf("--max-total: %v", err)
	}
	dryRun, _ := fs.GetBool("dry-run")
	dir, infos, err := listCaptures(fs)
	if err != nil {
		return 1, err
	}
	doomed := pickGarbage(infos, time.Now().Add(-maxAge), maxTotal)
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
		fmt.Printf("%s %s (%s)\n", verb, filepath.Base(in.Path), humanBytes(in.Size))
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
	return fmt.Sprintf("%s %d of %d captures, %s", verb, n, of, humanBytes(size))
}

// pickGarbage chooses what gc deletes: finished captures started (or
// imported) before cutoff, then the oldest finished ones by that time
// until the rest fit in maxTotal. Live captures are never chosen.
func pickGarbage(infos []capture.Info, cutoff time.Time, maxTotal int64) []capture.Info {
	var total int64
	for _, in := range infos {
		total += in.Size
	}
	oldestFirst := slices.Clone(infos)
	slices.SortStableFunc(oldestFirst, func(a, b capture.Info) int { return lastTouched(a).Compare(lastTouched(b)) })
	var doomed []capture.Info
	for _, in := range oldestFirst {
		if in.Live {
			continue
		}
		tooOld := in.Err == nil && lastTouched(in).Before(cutoff)
		if tooOld || total > maxTotal {
			doomed = append(doomed, in)
			total -= in.Size
		}
	}
	return doomed
}

// lastTouched is when a capture started or was imported, whichever is
// later: a capture imported today from last year's bug report is as new
// as its import. (Not the file's mtime: storing lint findings moves it.)
func lastTouched(in capture.Info) time.Time {
	if t, err := time.Parse(time.RFC3339, in.Meta.Notes[capture.NoteImportedAt]); err == nil && t.After(in.Meta.Start) {
		return t
	}
	return in.Meta.Start
}
