package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/replay"
	flag "github.com/spf13/pflag"
)

// diffHelp is `acpscope diff`'s synopsis, examples and flags.
func diffHelp() help {
	return help{
		usage: "A B [--session S [--session S2]] [--json] [--ignore PATH]… [--strict]",
		example: `  acpscope diff before.acpscope after.acpscope
  acpscope diff a.acpscope b.acpscope --session sess_1 --session 0f3c…   # one session of each
  acpscope diff a b --json --ignore 'result.usage.**'`,
		setup: func(fs *flag.FlagSet) {
			fs.String("dir", "", "capture directory (default $ACPSCOPE_DIR or ~/.local/state/acpscope/captures)")
			fs.StringArray("session", nil, "compare this session (once: of A, and of B if B has it; twice: of A, then of B)")
			fs.Bool("json", false, "print the differences as JSON")
			fs.StringArray("ignore", nil, "also ignore this JSON path (glob: * one segment, ** any)")
			fs.Bool("strict", false, "compare streamed chunks one by one instead of as joined text")
			fs.Bool("no-default-ignore", false, "compare ids, sessionIds, _meta and timestamps too")
		},
	}
}

func runDiff(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) != 2 {
		return 2, usageErrorf("expected two captures A B, got %q", args)
	}
	sessions, _ := fs.GetStringArray("session")
	if len(sessions) > 2 {
		return 2, usageErrorf("--session at most twice (one for A, one for B)")
	}
	a, err := loadForDiff(fs, args[0], sessionArg(sessions, 0))
	if err != nil {
		return 2, err
	}
	sb := sessionArg(sessions, 1)
	if len(sessions) == 1 {
		sb = "" // B's own: the same id if it has it, else its only session
	}
	b, err := loadForDiff(fs, args[1], sb)
	if err != nil {
		return 2, err
	}
	if len(sessions) == 1 {
		switch bs := replay.Sessions(b); {
		case hasSession(bs, sessions[0]):
			b = replay.OnlySession(b, sessions[0])
		case len(bs) > 1:
			return 2, usageErrorf("B has no session %q and several others (%v): name B's with a second --session", sessions[0], bs)
		}
	}
	strict, _ := fs.GetBool("strict")
	d := replay.DiffConversations(a, b, replay.CompareOptions{Ignore: ignoreFlags(fs)}, strict)
	if js, _ := fs.GetBool("json"); js {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			return 2, err
		}
	} else {
		d.WriteText(os.Stdout, filepath.Base(args[0]), filepath.Base(args[1]))
	}
	if d.Same() {
		return 0, nil
	}
	return 1, nil
}

func hasSession(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sessionArg(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// ignoreFlags collects the volatile paths: the defaults unless turned
// off, plus every --ignore.
func ignoreFlags(fs *flag.FlagSet) replay.Ignore {
	var ig replay.Ignore
	if off, _ := fs.GetBool("no-default-ignore"); !off {
		ig = append(ig, replay.DefaultIgnore...)
	}
	extra, _ := fs.GetStringArray("ignore")
	return append(ig, extra...)
}

func loadForDiff(fs *flag.FlagSet, name, session string) ([]protocol.Msg, error) {
	path, err := resolveCapture(fs, name)
	if err != nil {
		return nil, err
	}
	src, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	msgs, err := replay.Load(src, session)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return msgs, nil
}
