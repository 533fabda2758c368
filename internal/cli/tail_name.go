package cli

// tail -F: follow captures one after another, as tail -F follows a log
// file across rotations and kubectl logs -f a pod. Editors restart their
// agents often, and each run is a capture of its own.

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/acpscope/acpscope/capture"
	flag "github.com/spf13/pflag"
)

// tailFollowName follows the named capture, or the newest live one, and
// then each capture that appears, one at a time in the order they
// started, until Ctrl-C or SIGTERM.
func tailFollowName(fs *flag.FlagSet, args []string, p *tailPrinter, lines int) (int, error) {
	dir, err := captureDir(fs)
	if err != nil {
		return 1, err
	}
	agent, _ := fs.GetString("agent")
	first := ""
	if len(args) > 0 {
		if first, err = oneCapture(fs, args); err != nil {
			return captureErrCode(err), err
		}
		if agent == "" { // its agent's next runs, not any agent's
			agent = capture.Stat(first).Meta.Agent
		}
	}
	match := agentMatch(agent)
	// Watch before looking for the first: a capture that starts between
	// the two is then handed out rather than missed.
	watcher, err := capture.NewDirWatcher(dir, match)
	if err != nil {
		return 1, err
	}
	if first == "" {
		infos, err := capture.List(dir)
		if err != nil {
			return 1, err
		}
		if in, ok := newestLive(infos, match); ok {
			first = in.Path
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if first == "" {
		fmt.Fprintf(os.Stderr, "acpscope tail: waiting for a capture%s in %s (Ctrl-C to stop)\n", ofAgent(agent), dir)
	}
	for path, n := first, lines; ; n = -1 {
		if path != "" {
			watcher.Skip(path)
			if err := tailOne(ctx, p, path, n); err != nil {
				return 1, err
			}
		}
		in, err := watcher.Next(ctx)
		if ctx.Err() != nil {
			return 0, nil
		}
		if err != nil {
			return 1, err
		}
		path = in.Path
	}
}

// tailOne follows one capture to its end: its last lines records first
// (lines < 0: all of them). A capture that cannot be read is said on
// stderr and skipped; the error returned is one of printing.
func tailOne(ctx context.Context, p *tailPrinter, path string, lines int) error {
	src, err := capture.OpenWhenReady(ctx, path)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "acpscope tail: skipping %s: %v\n", filepath.Base(path), err)
		return nil
	}
	defer src.Close()
	from := uint64(1)
	if lines >= 0 {
		if from, err = tailFrom(src, lines, p.filter != nil); err != nil {
			from = src.Last() + 1 // -n 0 of a finished capture: none of it, then on to the next
		}
	}
	if err := p.separator(src.Meta(), path); err != nil {
		return err
	}
	end, err := p.follow(ctx, src, from)
	if err != nil || ctx.Err() != nil {
		return err
	}
	if _, live := src.(*capture.Live); !live {
		fmt.Fprintf(os.Stderr, "acpscope tail: %s had finished; waiting for the next capture (Ctrl-C to stop)\n", filepath.Base(path))
		return nil
	}
	return reportEnd(end, true)
}

// separator marks where a capture's records begin: in the table, a line
// of its own and the header again; with JSONL, whose stdout must stay
// one JSON object per line, a line on stderr.
func (p *tailPrinter) separator(m capture.Meta, path string) error {
	what := filepath.Base(path)
	if m.Agent != "" {
		what += ", agent " + m.Agent
	}
	what += ", started " + m.Start.Local().Format("2006-01-02 15:04:05")
	if !p.table {
		fmt.Fprintf(os.Stderr, "acpscope tail: following %s\n", what)
		return nil
	}
	fmt.Fprintf(p.w, "=== %s ===\n", what)
	p.header()
	return p.w.Flush()
}

func ofAgent(agent string) string {
	if agent == "" {
		return ""
	}
	return " of agent " + agent
}
