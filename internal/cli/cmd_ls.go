package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	flag "github.com/spf13/pflag"
)

// lsHelp is `acpscope ls`'s synopsis, examples and flags.
func lsHelp() help {
	return help{
		usage: "[--dir DIR] [--json]",
		example: `  acpscope ls
  acpscope ls --json | jq '.[] | select(.live)'`,
		setup: func(fs *flag.FlagSet) {
			captureDirFlag(fs)
			fs.Bool("json", false, "print one JSON array instead of a table")
		},
	}
}

func runLs(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) > 0 {
		return 2, usageErrorf("ls takes no arguments (got %q); use --dir to list another directory", args)
	}
	dir, infos, err := listCaptures(fs)
	if err != nil {
		return 1, err
	}
	if asJSON, _ := fs.GetBool("json"); asJSON {
		return 0, printLsJSON(infos)
	}
	if len(infos) == 0 {
		fmt.Fprintf(os.Stderr, "no captures in %s yet; run 'acpscope demo' or put 'acpscope -- AGENT CMD…' in your editor's agent config\n", dir)
		return 0, nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CAPTURE\tSTART\tAGENT\tDURATION\tMSGS\tSIZE\tSTATE\tLOST\tFINDINGS")
	for _, in := range infos {
		writeLsRow(tw, in)
	}
	if err := tw.Flush(); err != nil {
		return 1, err
	}
	// The reasons are long: after the table, so they do not widen it.
	for _, in := range infos {
		if in.Err != nil {
			fmt.Fprintf(os.Stderr, "acpscope ls: %v\n", in.Err)
		}
	}
	return 0, nil
}

func writeLsRow(tw *tabwriter.Writer, in capture.Info) {
	name := filepath.Base(in.Path)
	if in.Err != nil {
		fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t%s\tunreadable\t-\t-\n", name, human.Size(in.Size))
		return
	}
	m := in.Meta
	end := m.End
	if in.Live {
		end = time.Now()
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n",
		name, m.Start.Local().Format("2006-01-02 15:04:05"), orDash(m.Agent), durationText(end.Sub(m.Start)),
		in.Messages, human.Size(in.Size), captureState(in), lossText(m.Loss), findingsText(in.Findings))
}

// captureState says whether a capture is live, and how its agent ended.
func captureState(in capture.Info) string {
	switch {
	case in.Live:
		return "live"
	case in.Meta.Exit == nil:
		return "finished"
	case in.Meta.Exit.Error != "":
		return "failed to start"
	case in.Meta.Exit.Signal != "":
		return fmt.Sprintf("exit %d (%s)", in.Meta.Exit.Code, in.Meta.Exit.Signal)
	}
	return fmt.Sprintf("exit %d", in.Meta.Exit.Code)
}

func lossText(l capture.Loss) string {
	if l.Messages == 0 && l.Bytes == 0 && l.WriteErrors == 0 {
		return "0"
	}
	return fmt.Sprintf("%d msgs", l.Messages)
}

// findingsText shows a capture never linted as "-", not as a clean 0.
func findingsText(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// durationText is "-" for a capture with no known duration.
func durationText(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return human.Duration(d)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printLsJSON(infos []capture.Info) error {
	type row struct {
		Path     string       `json:"path"`
		Live     bool         `json:"live"`
		Size     int64        `json:"size"`
		Messages uint64       `json:"messages"`
		Findings *int         `json:"findings"` // null: never linted
		Meta     capture.Meta `json:"meta"`
		Error    string       `json:"error,omitempty"`
	}
	rows := make([]row, 0, len(infos))
	for _, in := range infos {
		r := row{Path: in.Path, Live: in.Live, Size: in.Size, Messages: in.Messages, Meta: in.Meta}
		if in.Findings >= 0 {
			r.Findings = &in.Findings
		}
		if in.Err != nil {
			r.Error = in.Err.Error()
		}
		rows = append(rows, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}
