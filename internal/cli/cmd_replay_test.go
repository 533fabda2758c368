package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/demo"
	"github.com/acpscope/acpscope/internal/testkit"
)

// The test binary doubles as acpscope: with this variable set it runs
// main's dispatcher instead of the tests, so commands can spawn it as an
// agent (demo-agent), a client (demo-client) or a replayer.
const runAsMainEnv = "ACPSCOPE_TEST_RUN_MAIN"

func init() {
	if os.Getenv(runAsMainEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
}

var updateGolden = flag.Bool("update-cmd", false, "rewrite the command golden files under testdata/")

// acpscope runs the test binary as acpscope with args.
func acpscope(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(mainEnv(), "ACPSCOPE_DIR="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running acpscope %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// self is the command line that runs the test binary as acpscope: the
// environment variable is inherited by the children it spawns.
func self() string { return os.Args[0] }

// capTee hands each write to a capture stream, as the stdio proxy would.
type capTee struct {
	w      io.WriteCloser
	cw     *capture.Writer
	stream capture.Stream
}

func (c capTee) Write(b []byte) (int, error) {
	c.cw.Chunk(0, c.stream, time.Now().UnixNano(), b)
	return c.w.Write(b)
}

func (c capTee) Close() error { return c.w.Close() }

// recordDemoCapture runs the demo client against the demo agent over
// pipes, writing everything both send into a new capture file.
func recordDemoCapture(t *testing.T, agentOpts demo.AgentOptions, clientOpts demo.ClientOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.acpscope")
	cw, err := capture.Create(path, capture.WriterOptions{NoSync: true, NoFeed: true, Meta: capture.Meta{Transport: "stdio", Agent: "demo"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	done := make(chan error, 1)
	go func() { // the demo agent; ends when the client closes its input
		err := demo.RunAgent(ctx, toAgentR, capTee{toClientW, cw, capture.StreamAgent}, agentOpts)
		toClientW.Close()
		done <- err
	}()
	if _, err := demo.RunClient(ctx, toClientR, capTee{toAgentW, cw, capture.StreamClient}, clientOpts); err != nil {
		t.Fatalf("demo client: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("demo agent: %v", err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCmdReplayAgainstDemoAgent(t *testing.T) {
	rec := recordDemoCapture(t, demo.AgentOptions{}, demo.ClientOptions{Sessions: 2})
	replayed := filepath.Join(t.TempDir(), "replayed.acpscope")
	tests := []struct {
		name     string
		agent    []string
		extra    []string
		wantCode int
		wantOut  []string
	}{
		{"same agent", []string{"demo-agent", "--delay", "0"}, []string{"--capture", replayed}, 0, []string{"0 differ"}},
		{"uuid session ids rebound", []string{"demo-agent", "--delay", "0", "--session-scheme", "uuid"}, []string{"--no-capture"}, 0, []string{"0 differ"}},
		{"mutated agent", []string{"demo-agent", "--delay", "0", "--mutate", "title"}, []string{"--no-capture"}, 1, []string{"~ changed", "title"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"replay", rec, "--timeout", "1m"}, tt.extra...) // generous: no case waits it out
			args = append(append(args, "--", self()), tt.agent...)
			out, errOut, code := acpscope(t, args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut, "acpscope replay: sent ") {
				t.Errorf("no progress counter on stderr:\n%s", errOut)
			}
		})
	}
	// The first replay was captured like any other run.
	r, err := capture.Open(replayed)
	if err != nil {
		t.Fatalf("the replay was not captured: %v", err)
	}
	defer r.Close()
	if m := r.Meta(); m.Transport != "replay" || m.Notes["replayOf"] != "demo.acpscope" || r.Last() == 0 {
		t.Errorf("replay capture meta %+v with %d records", m, r.Last())
	}
}

func TestCmdReplayUsage(t *testing.T) {
	tests := [][]string{
		{"replay", "x.acpscope"},                          // no agent
		{"replay", "--as-agent", "x", "--", "agent"},      // as agent with a command
		{"replay", "--as-agent", "x", "--speed", "fast"},  // bad speed (reported after loading)
		{"replay", "/nonexistent.acpscope", "--", "true"}, // missing capture
	}
	for _, args := range tests {
		_, errOut, code := acpscope(t, args...)
		if code != 2 || errOut == "" {
			t.Errorf("acpscope %q: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

func TestCmdReplayAsAgentToDemoClient(t *testing.T) {
	rec := recordDemoCapture(t, demo.AgentOptions{SessionScheme: demo.SchemeUUID}, demo.ClientOptions{})
	_, errOut, code := acpscope(t, "demo-client", "--", self(), "replay", "--as-agent", rec, "--speed", "max")
	if code != 0 {
		t.Fatalf("demo client against the replaying agent: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "0 unmatched") {
		t.Errorf("replayer did not report a clean run:\n%s", errOut)
	}
}

func TestCmdDiff(t *testing.T) {
	a := recordDemoCapture(t, demo.AgentOptions{}, demo.ClientOptions{})
	b := recordDemoCapture(t, demo.AgentOptions{SessionScheme: demo.SchemeUUID}, demo.ClientOptions{})
	c := recordDemoCapture(t, demo.AgentOptions{Mutate: demo.MutateTitle}, demo.ClientOptions{})
	if out, errOut, code := acpscope(t, "diff", a, b); code != 0 {
		t.Errorf("two runs of the same demo: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := acpscope(t, "diff", a, c)
	if code != 1 || !strings.Contains(out, "title") || !strings.Contains(out, "latency") {
		t.Errorf("diff with a mutated run: exit %d\n%s%s", code, out, errOut)
	}
	js, _, code := acpscope(t, "diff", "--json", a, c)
	if code != 1 || !strings.Contains(js, `"same": false`) || !strings.Contains(js, `"op": "changed"`) {
		t.Errorf("diff --json: exit %d\n%s", code, js)
	}
}

func TestCmdExportAndImport(t *testing.T) {
	rec := recordDemoCapture(t, demo.AgentOptions{}, demo.ClientOptions{MCPSecret: true})
	dir := t.TempDir()
	bug := filepath.Join(dir, "bug.acpscope")
	_, errOut, code := acpscope(t, "export", rec, "-o", bug)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	raw, _ := os.ReadFile(bug)
	if bytes.Contains(raw, []byte(demo.SecretValue)) || strings.Contains(errOut, demo.SecretValue) {
		t.Errorf("the MCP env secret survived the export")
	}
	if !strings.Contains(errOut, "params.mcpServers.0.env.0.value") || !strings.Contains(errOut, "redacted 1 value:") {
		t.Errorf("export did not list what it redacted:\n%s", errOut)
	}

	_, errOut, code = acpscope(t, "export", rec, "--no-redact", "-o", filepath.Join(dir, "raw.acpscope"))
	if code != 0 || !strings.Contains(errOut, "WARNING") {
		t.Errorf("--no-redact: exit %d, stderr %q", code, errOut)
	}

	jsonl, _, code := acpscope(t, "export", rec, "--format", "jsonl", "-o", "-")
	if code != 0 || strings.Contains(jsonl, demo.SecretValue) {
		t.Errorf("jsonl export: exit %d, secret present: %v", code, strings.Contains(jsonl, demo.SecretValue))
	}
	for i, l := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		if _, err := capture.ParseJSONL([]byte(l)); err != nil {
			t.Fatalf("jsonl line %d: %v", i+1, err)
		}
	}

	mmd, errOut, code := acpscope(t, "export", rec, "--format", "mermaid", "-o", "-")
	if code != 0 {
		t.Fatalf("mermaid export: exit %d\n%s", code, errOut)
	}
	goldenCmd(t, "demo-session.mmd", []byte(mmd))
	if errOut != "" {
		t.Errorf("mermaid export to stdout wrote %q on stderr; nothing to report there", errOut)
	}

	// Import: our export, the JSONL, and garbage.
	out, errOut, code := acpscope(t, "import", bug, "-o", filepath.Join(dir, "back.acpscope"))
	if code != 0 || strings.TrimSpace(out) != filepath.Join(dir, "back.acpscope") {
		t.Errorf("import of the export: exit %d, stdout %q\n%s", code, out, errOut)
	}
	jl := filepath.Join(dir, "demo.jsonl")
	os.WriteFile(jl, []byte(jsonl), 0o600)
	if _, errOut, code := acpscope(t, "import", jl, "-o", filepath.Join(dir, "jl.acpscope")); code != 0 || !strings.Contains(errOut, "(jsonl)") {
		t.Errorf("import of the jsonl export: exit %d\n%s", code, errOut)
	}
	junk := filepath.Join(dir, "junk.txt")
	os.WriteFile(junk, []byte("not a capture\n"), 0o600)
	if _, errOut, code := acpscope(t, "import", junk, "-o", filepath.Join(dir, "junk.acpscope")); code != 2 || !strings.Contains(errOut, "expected an acpscope capture") {
		t.Errorf("import of junk: exit %d\n%s", code, errOut)
	}
}

// TestCmdImportFixtures imports two fixtures through the command (the
// capture package imports every one of them).
func TestCmdImportFixtures(t *testing.T) {
	var files []string
	for _, name := range []string{"goose-1.37.0.json", "codex-acp-0.16.0.json"} {
		f := filepath.Join("../../../shared/fixtures/acp-devtools-handshakes", name)
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Skip("no fixtures in ../../../shared/fixtures (they live beside the repository)")
	}
	dir := t.TempDir()
	for _, f := range files {
		out := filepath.Join(dir, filepath.Base(f)+".acpscope")
		if _, errOut, code := acpscope(t, "import", f, "-o", out); code != 0 || !strings.Contains(errOut, "acp-devtools") {
			t.Errorf("import %s: exit %d\n%s", f, code, errOut)
		}
	}
}

// goldenCmd compares got with testdata/name, or rewrites it with
// -update-cmd.
func goldenCmd(t *testing.T, name string, got []byte) {
	t.Helper()
	testkit.Golden(t, filepath.Join("testdata", name), got, *updateGolden, "-update-cmd")
}

// TestCmdReplayAgentExits checks what replay says when the agent exits
// early: its exit status and what the replay waited for, as an error when
// nothing came back.
func TestCmdReplayAgentExits(t *testing.T) {
	rec := recordDemoCapture(t, demo.AgentOptions{}, demo.ClientOptions{})
	tests := []struct {
		name  string
		agent []string
		code  int
		want  string
	}{
		{"false", []string{"false"}, 2, "acpscope replay: the agent exited (status 1) before answering initialize [0]\n"},
		{"exit 7 after reading", []string{"sh", "-c", "read x; exit 7"}, 2, "acpscope replay: the agent exited (status 7) before answering initialize [0]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := acpscope(t, append([]string{"replay", rec, "--no-capture", "--"}, tt.agent...)...)
			if code != tt.code || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "pipe") {
				t.Fatalf("exit %d, stderr:\n%s\nwant %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestCmdReplayFaults records the demo through the stdio proxy under a
// fault plan, then replays it against a fresh demo agent: without
// --faults the replay plays what each side sent and says the faults are
// not reproduced; with --faults recorded it applies the capture's plan
// and seed again, matches what the client received, and records the
// same alterations in the same order.
func TestCmdReplayFaults(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.acpscope")
	out, errOut, code := acpscope(t, "demo-client", "--", self(), "--capture", orig, "--faults", "flaky-agent", "--", self(), "demo-agent", "--delay", "0")
	if code != 0 {
		t.Fatalf("recording under flaky-agent: exit %d\n%s\n%s", code, out, errOut)
	}
	altered := func(path string) []string {
		r, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var got []string
		if err := r.Scan(1, func(rec *capture.Record) bool {
			if rec.Fault != nil {
				// Not by seq: how the two directions interleave in a
				// capture varies from run to run.
				got = append(got, fmt.Sprintf("%s %s %s %s", rec.Method, rec.Fault.Rule, rec.Fault.Action, rec.Fault.Stage))
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := altered(orig)
	if len(want) == 0 {
		t.Fatal("the flaky-agent plan altered nothing in the recording")
	}

	out, errOut, code = acpscope(t, "replay", orig, "--no-capture", "--timeout", "1m", "--", self(), "demo-agent", "--delay", "0")
	if code != 0 || !strings.Contains(errOut, fmt.Sprintf("the capture holds %d messages acpscope altered", len(want))) {
		t.Errorf("replay without faults: exit %d, want 0 and a word on the altered messages\n%s\n%s", code, out, errOut)
	}

	again := filepath.Join(dir, "again.acpscope")
	out, errOut, code = acpscope(t, "replay", orig, "--capture", again, "--faults", "recorded", "--timeout", "1m", "--", self(), "demo-agent", "--delay", "0")
	if code != 0 || !strings.Contains(out, " 0 differ") {
		t.Fatalf("replay --faults recorded: exit %d, want 0 and no difference\n%s\n%s", code, out, errOut)
	}
	if got := altered(again); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the replay altered\n%s\nwant, as the recording\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	plain := recordDemoCapture(t, demo.AgentOptions{}, demo.ClientOptions{})
	if _, errOut, code := acpscope(t, "replay", plain, "--faults", "recorded", "--", self(), "demo-agent"); code != 2 || !strings.Contains(errOut, "was not made with --faults") {
		t.Errorf("--faults recorded of a capture without faults: exit %d, want 2 with a reason\n%s", code, errOut)
	}
}
