package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acpscope/acpscope/agent"
	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/proxy"
	flag "github.com/spf13/pflag"
)

// stdioHelp is `acpscope stdio`'s synopsis, examples and flags.
func stdioHelp() help {
	return help{
		usage: "[flags] -- AGENT CMD…",
		example: `  acpscope -- npx @zed-industries/claude-code-acp
  acpscope --capture bug.acpscope -- ./my-agent --acp
  acpscope --grace 2s --name gemini -- gemini --experimental-acp
  acpscope --otlp http://localhost:4318 -- ./my-agent --acp      # and spans to a collector
  acpscope --faults slow-agent -- ./my-agent --acp               # a ready-made fault plan
  acpscope --faults plan.yaml --allow-intercept -- ./my-agent    # a plan; hold and send by hand`,
		setup: stdioFlags,
	}
}

// stdioFlags are shared by the stdio proxy and the commands that run it.
func stdioFlags(fs *flag.FlagSet) {
	fs.String("capture", "", "write the capture to this file")
	captureDirFlag(fs)
	fs.Bool("no-capture", false, "forward only, record nothing")
	fs.String("name", "", "agent name for listings (default: from the command)")
	durationFlag(fs, "grace", agent.DefaultGrace, "after stdin closes, how long the agent may stay silent before SIGTERM, then SIGKILL")
	fs.Bool("quiet", false, "do not print where the capture goes (loss warnings still print)")
	commitFlag(fs)
	faultFlags(fs)
	otlpFlags(fs)
}

func runStdio(fs *flag.FlagSet, args []string) (int, error) {
	if fs.ArgsLenAtDash() != 0 || len(args) == 0 {
		return 2, usageErrorf("the agent command must follow '--': acpscope [flags] -- AGENT CMD… (got %q)", args)
	}
	name, _ := fs.GetString("name")
	if name == "" {
		name = agentName(args)
	}
	grace, _ := fs.GetDuration("grace")
	// An agent that cannot be found gets its one line and no capture: the
	// editor's log should hold the reason, not a notice about recording.
	if _, err := exec.LookPath(args[0]); err != nil {
		fmt.Fprintf(os.Stderr, "acpscope: %v\n", &agent.StartError{Command: args[0], Err: errors.Unwrap(err)})
		return agent.ExitCannotStart, nil
	}
	w := openCapture(fs, newMeta("stdio", name, args))
	stderr := &tailWriter{w: os.Stderr}
	cfg := proxy.StdioConfig{Argv: args, Grace: grace, Stderr: stderr}
	if w != nil {
		cfg.Recorder = w
	}
	faults, err := startFaults(fs, w)
	if err != nil {
		if w != nil {
			closeCapture(w)
		}
		return 2, err
	}
	cfg.Intercept = faults.interceptor()
	start := time.Now()
	res, err := proxy.Stdio(context.Background(), cfg)
	faults.stop()
	if w != nil {
		finishStdioCapture(w, res, err)
	}
	var startErr *agent.StartError
	if errors.As(err, &startErr) {
		fmt.Fprintf(os.Stderr, "acpscope: %v\n", err)
		return res.Exit.Code, nil
	}
	if err == nil && failedAtOnce(res, time.Since(start)) {
		warn(failedAtOnceMessage(res, stderr.lastLine(), args))
	}
	return res.Exit.Code, err
}

// failedAtOnceMessage points at the agent's own words when it wrote to
// stderr before failing (a missing key, a bad flag), and at its command
// line when it said nothing at all.
func failedAtOnceMessage(res proxy.Result, last string, args []string) string {
	if res.StderrBytes == 0 {
		return fmt.Sprintf("the agent %s at once, before saying anything: check its command line (%s)", exitedHow(res.Exit), strings.Join(args, " "))
	}
	if last == "" {
		return fmt.Sprintf("the agent %s at once, after writing to stderr: see its stderr above", exitedHow(res.Exit))
	}
	return fmt.Sprintf("the agent %s at once; its stderr (above) ends %q", exitedHow(res.Exit), last)
}

// tailWriter passes the agent's stderr through and keeps its last bytes,
// to quote its last line if it fails at once.
type tailWriter struct {
	w    io.Writer
	mu   sync.Mutex // the stderr pump writes; the command reads after the run
	tail []byte
}

const tailKeep = 4 << 10

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	t.tail = append(t.tail, b[max(0, len(b)-tailKeep):]...)
	if len(t.tail) > tailKeep {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailKeep:]...)
	}
	t.mu.Unlock()
	return t.w.Write(b)
}

// lastLine returns the last non-blank line kept, at most 200 bytes of it,
// as valid UTF-8.
func (t *tailWriter) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimRight(string(t.tail), " \t\r\n")
	s = strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// atOnce is how soon an agent that fails counts as never having worked.
const atOnce = time.Second

// failedAtOnce reports an agent that failed on its own before it sent a
// byte: a wrong command or flag, whose only trace may otherwise be our
// "recording to" line and an exit code the editor hides.
func failedAtOnce(res proxy.Result, ran time.Duration) bool {
	return res.Exit.Code != 0 && res.Signal == nil && res.AgentBytes == 0 && ran < atOnce
}

func exitedHow(e agent.ExitStatus) string {
	if e.Signal != 0 {
		return "was killed by " + e.SignalName()
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}

// commitFlag is --commit-every, the capture's durability window, for
// the commands that proxy traffic (stdio, proxy, serve, connect).
func commitFlag(fs *flag.FlagSet) {
	rangedDurationFlag(fs, "commit-every", capture.DefaultCommitEvery, capture.MinCommitEvery, capture.MaxCommitEvery,
		"commit the capture, with fsync, at least this often: a SIGKILL loses at most this much of it (fewer commits: fewer round trips held up by their kernel time)")
}

// openCapture starts recording for every command that proxies. A capture
// that cannot be created must not keep the editor from its agent: it says
// so loudly and the traffic flows unrecorded.
func openCapture(fs *flag.FlagSet, meta capture.Meta) *capture.Writer {
	if off, _ := fs.GetBool("no-capture"); off {
		noCaptureNoSpans(fs)
		return nil
	}
	path, err := newCapturePath(fs, meta.Agent)
	if err == nil {
		var w *capture.Writer
		every, _ := fs.GetDuration("commit-every") // 0 where the command has no such flag: the default
		w, err = capture.Create(path, capture.WriterOptions{
			Meta:        meta,
			Warn:        warn,
			CommitEvery: every,
		})
		if err == nil {
			recordingHeap()
			if quiet, _ := fs.GetBool("quiet"); !quiet {
				fmt.Fprintf(os.Stderr, "acpscope: recording to %s\n", w.Path())
			}
			startTelemetry(fs, w)
			return w
		}
	}
	if errors.Is(err, iofs.ErrExist) {
		err = fmt.Errorf("%s already exists: pick another --capture name (or leave --capture out for a new file in the capture directory)", path)
	}
	fmt.Fprintf(os.Stderr, "acpscope: NOT RECORDING: %v; forwarding continues\n", err)
	return nil
}

// newCapturePath is --capture, or a new name in --dir or the default dir.
func newCapturePath(fs *flag.FlagSet, name string) (string, error) {
	if path, _ := fs.GetString("capture"); path != "" {
		return path, nil
	}
	dir, err := captureDir(fs)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, capture.NewName(name, time.Now(), os.Getpid())), nil
}

func newMeta(transport, name string, argv []string) capture.Meta {
	cwd, _ := os.Getwd()
	return capture.Meta{
		ProxyVersion: version,
		Argv:         argv,
		Cwd:          cwd,
		Agent:        name,
		Transport:    transport,
		Pid:          os.Getpid(),
		Start:        time.Now(),
	}
}

func finishStdioCapture(w *capture.Writer, res proxy.Result, runErr error) {
	w.UpdateMeta(func(m *capture.Meta) {
		m.Exit = &capture.Exit{Code: res.Exit.Code, Signal: res.Exit.SignalName()}
		if runErr != nil {
			m.Exit.Error = runErr.Error()
		}
		if m.Notes == nil {
			m.Notes = map[string]string{}
		}
		m.Notes["endedBy"] = res.First.String()
	})
	closeCapture(w)
}

// launchers run the package named by their first plain argument; the
// agent's name is that package's, not "npx".
var launchers = map[string]bool{"npx": true, "bunx": true, "pnpx": true, "uvx": true, "node": true, "python": true, "python3": true, "bun": true, "deno": true, "pipx": true}

// agentName guesses a short agent name from its command line.
func agentName(argv []string) string {
	name := filepath.Base(argv[0])
	if name == "acpscope" && len(argv) > 1 && !strings.HasPrefix(argv[1], "-") {
		return argv[1] // one of our own peers: acpscope demo-agent
	}
	if launchers[name] {
		for _, a := range argv[1:] {
			if !strings.HasPrefix(a, "-") && a != "run" && a != "exec" {
				name = filepath.Base(a)
				break
			}
		}
	}
	if at := strings.LastIndex(name, "@"); at > 0 {
		name = name[:at] // drop a version: pkg@1.2.3
	}
	switch ext := filepath.Ext(name); ext {
	case ".js", ".mjs", ".cjs", ".ts", ".py", ".exe", ".sh":
		name = strings.TrimSuffix(name, ext)
	}
	return name
}
