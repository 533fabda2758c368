package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/inspector"
	"github.com/acpscope/acpscope/internal/demo"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/wire"
	flag "github.com/spf13/pflag"
	"golang.org/x/term"
)

// demoHelp is `acpscope demo`'s synopsis, examples and flags.
func demoHelp() help {
	return help{
		usage: "[--dir DIR] [--capture FILE] [--no-inspect] [--cancel] [--quiet-agent] [--otlp URL]",
		example: `  acpscope demo
  acpscope demo --no-inspect --dir /tmp/acpscope-demo && acpscope dump --dir /tmp/acpscope-demo latest`,
		setup: func(fs *flag.FlagSet) {
			fs.String("capture", "", "write the capture to this file")
			captureDirFlag(fs)
			fs.Bool("no-inspect", false, "print the summary only, even on a terminal")
			fs.Bool("cancel", false, "cancel the second prompt at its permission request")
			fs.Bool("quiet-agent", false, "hide the demo agent's stderr log")
			fs.String("otlp", "", "the proxy also streams spans to this OpenTelemetry collector, e.g. http://localhost:4318")
		},
	}
}

func runDemo(fs *flag.FlagSet, args []string) (int, error) {
	if len(args) > 0 {
		return 2, usageErrorf("demo takes no arguments, got %q", args)
	}
	path, err := newCapturePath(fs, "acpscope-demo-agent")
	if err != nil {
		return 1, err
	}
	// The proxy would forward without recording rather than overwrite,
	// and the summary would then describe the old file.
	if _, err := os.Lstat(path); err == nil {
		return 2, usageErrorf("%s already exists: the demo records a new capture; choose another --capture, or remove it first", path)
	}
	self, err := os.Executable()
	if err != nil {
		return 1, fmt.Errorf("finding acpscope's own binary to run the demo agent: %w", err)
	}
	// The editor's side of the demo runs acpscope exactly as an editor's
	// agent config would: acpscope --capture FILE -- AGENT.
	argv := []string{self, "--quiet", "--name", "acpscope-demo-agent", "--capture", path}
	if otlp, _ := fs.GetString("otlp"); otlp != "" {
		argv = append(argv, "--otlp", otlp)
	}
	argv = append(argv, "--", self, "demo-agent")
	fmt.Fprintf(os.Stderr, "demo: client → acpscope → demo agent, recording to %s\n", path)
	var agentLog io.Writer = os.Stderr
	if quiet, _ := fs.GetBool("quiet-agent"); quiet {
		agentLog = io.Discard
	}
	cancel, _ := fs.GetBool("cancel")
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	sum, err := demo.ClientOverPipes(ctx, argv, agentLog, demo.ClientOptions{Cancel: cancel})
	if err != nil {
		return 1, fmt.Errorf("the demo conversation failed: %w", err)
	}
	if err := printDemoSummary(os.Stdout, path, sum); err != nil {
		return 1, err
	}
	noInspect, _ := fs.GetBool("no-inspect")
	if noInspect || !term.IsTerminal(int(os.Stdout.Fd())) || !term.IsTerminal(int(os.Stdin.Fd())) {
		return 0, nil
	}
	if err := inspector.Run(inspector.Options{Path: path}); err != nil && !errors.Is(err, inspector.ErrNoTerminal) {
		return 1, err
	}
	return 0, nil
}

// printDemoSummary says what the capture holds, from the capture itself:
// what the proxy recorded, not what the client believes it sent.
func printDemoSummary(w io.Writer, path string, sum demo.Summary) error {
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	var tally captureTally
	if err := r.Scan(1, func(rec *capture.Record) bool { tally.add(rec); return true }); err != nil {
		return err
	}
	meta := r.Meta()
	fmt.Fprintf(w, "\ncapture   %s\n", path)
	fmt.Fprintf(w, "agent     %s %s (protocol %d), exit %s\n", sum.AgentName, sum.AgentVersion, sum.ProtocolVersion, exitText(meta.Exit))
	fmt.Fprintf(w, "recorded  %d records in %s: %d client→agent, %d agent→client, %d stderr lines; %d lost\n",
		tally.total, human.Duration(meta.End.Sub(meta.Start)), tally.byDir[wire.DirClient], tally.byDir[wire.DirAgent], tally.stderr, meta.Loss.Messages)
	fmt.Fprintf(w, "methods   %s\n", tally.methodList())
	for _, s := range sum.Sessions {
		fmt.Fprintf(w, "session   %s %q: %d turns", s.ID, s.Title, len(s.Turns))
		for _, t := range s.Turns {
			fmt.Fprintf(w, ", %s", t.StopReason)
		}
		fmt.Fprintln(w)
	}
	name, self := captureRef(path), "acpscope"
	if builtByGoRun(os.Args[0]) {
		self = "go run ."
	}
	fmt.Fprintf(w, "\nnext      %s inspect %s\n          %s dump %s --filter 'method:session/prompt or error'\n          %s lint %s\n",
		self, name, self, name, self, name)
	if self != "acpscope" {
		fmt.Fprintln(w, "          (or acpscope inspect …, once installed with go install .)")
	}
	return nil
}

// builtByGoRun reports whether exe is a binary `go run` built: there is
// then no acpscope on PATH to suggest (the README starts with go run .
// demo). go run leaves it in go-build*/b*/exe/ in the temp dir, or since
// Go 1.24 in a HASH-d directory of the build cache.
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(dir))), "go-build") {
		return true
	}
	hash, ok := strings.CutSuffix(filepath.Base(dir), "-d")
	return ok && len(hash) == 64 && isLowerHex(hash) && filepath.Base(filepath.Dir(dir)) == hash[:2]
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func exitText(e *capture.Exit) string {
	if e == nil {
		return "unknown"
	}
	if e.Signal != "" {
		return fmt.Sprintf("%d (%s)", e.Code, e.Signal)
	}
	return fmt.Sprint(e.Code)
}

// captureTally counts records by direction and method.
type captureTally struct {
	total   int
	stderr  int
	byDir   map[wire.Dir]int
	methods map[string]int
}

func (t *captureTally) add(r *capture.Record) {
	if t.byDir == nil {
		t.byDir, t.methods = map[wire.Dir]int{}, map[string]int{}
	}
	t.total++
	if r.Kind == wire.KindStderr {
		t.stderr++
		return
	}
	t.byDir[r.Dir]++
	if r.Method != "" && (r.Kind == wire.KindRequest || r.Kind == wire.KindNotification) {
		t.methods[r.Method]++
	}
}

func (t *captureTally) methodList() string {
	names := make([]string, 0, len(t.methods))
	for m := range t.methods {
		names = append(names, m)
	}
	sort.Slice(names, func(i, j int) bool {
		return t.methods[names[i]] > t.methods[names[j]] || t.methods[names[i]] == t.methods[names[j]] && names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, m := range names {
		parts[i] = fmt.Sprintf("%s ×%d", m, t.methods[m])
	}
	return strings.Join(parts, ", ")
}
