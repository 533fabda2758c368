package cli

// End-to-end tests of the acpscope binary as a user runs it: built from
// the repository, run as a subprocess, talking to a real test agent.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	bolt "go.etcd.io/bbolt"
)

// testagentBin is the repository's test agent, built once in TestMain.
// acpscope itself is this test binary run again (see runAsMainEnv).
var testagentBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acpscope-main-test")
	if err != nil {
		panic(err)
	}
	testagentBin = filepath.Join(dir, "testagent")
	if out, err := exec.Command("go", "build", "-o", testagentBin, "github.com/acpscope/acpscope/internal/testagent").CombinedOutput(); err != nil {
		panic("building the test agent: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	plainAcpscope.Remove()
	rssSpawner.Remove()
	os.Exit(code)
}

// waitLimit bounds every wait for a command or a condition: generous,
// since the machines the tests run on are shared and busy; a passing wait
// returns as soon as its condition holds.
const waitLimit = 2 * time.Minute

// cliCommand is acpscope as a subprocess: this test binary in main mode.
func cliCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = mainEnv()
	return cmd
}

// mainEnv is the environment that runs this test binary as acpscope.
// Under -race every clean exit otherwise sleeps a second first.
func mainEnv() []string {
	return append(os.Environ(), runAsMainEnv+"=1", "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs acpscope with stdin and returns what it printed.
func runCLI(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	cmd := cliCommand(args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running acpscope %q: %v", args, err)
	}
	return result{out.String(), errOut.String(), code}
}

func TestDemoEndToEnd(t *testing.T) {
	dir := t.TempDir()
	demo := runCLI(t, nil, "demo", "--dir", dir, "--no-inspect", "--quiet-agent")
	if demo.code != 0 {
		t.Fatalf("demo exit %d: %s", demo.code, demo.stderr)
	}
	for _, want := range []string{"capture ", "exit 0", "0 lost", "session/prompt ×2", "end_turn"} {
		if !strings.Contains(demo.stdout, want) {
			t.Errorf("demo summary lacks %q:\n%s", want, demo.stdout)
		}
	}
	ls := runCLI(t, nil, "ls", "--dir", dir)
	if ls.code != 0 || strings.Count(ls.stdout, "\n") != 2 || !strings.Contains(ls.stdout, "acpscope-demo-agent") {
		t.Errorf("ls should list the demo capture:\n%s%s", ls.stdout, ls.stderr)
	}
	// The capture is causal and clean: lint finds nothing in the demo.
	lint := runCLI(t, nil, "lint", "--dir", dir) // no CAPTURE: the latest
	if lint.code != 0 || !strings.Contains(lint.stdout, "0 errors, 0 warnings") {
		t.Errorf("lint of the demo capture: exit %d\n%s%s", lint.code, lint.stdout, lint.stderr)
	}
	// The commands it suggests work as printed: the capture is outside
	// the default directory, so they must name it by its full path.
	elsewhere := filepath.Join(t.TempDir(), "sub", "demo2.acpscope")
	os.MkdirAll(filepath.Dir(elsewhere), 0o700)
	demo2 := runCLI(t, nil, "demo", "--dir", dir, "--capture", elsewhere, "--no-inspect", "--quiet-agent")
	if demo2.code != 0 || !strings.Contains(demo2.stdout, "acpscope lint "+elsewhere+"\n") {
		t.Errorf("demo --capture %s should suggest linting it by its full path:\n%s%s", elsewhere, demo2.stdout, demo2.stderr)
	}
	jsonl := runCLI(t, nil, "dump", "--dir", dir, "latest", "--format", "jsonl", "--filter", "method:session/prompt")
	if n := strings.Count(jsonl.stdout, "\n"); n != 4 {
		t.Errorf("filtered dump: %d lines, want 4 (two prompts and their responses):\n%s", n, jsonl.stdout)
	}
}

// adversarialStream is what real editors and agents sometimes send:
// invalid JSON, invalid UTF-8, CRLF, empty lines, batches, a large line,
// binary garbage, and no final newline.
func adversarialStream() []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	b.WriteString("{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n\n\n")
	b.WriteString(`[{"jsonrpc":"2.0","id":2,"method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n")
	b.WriteString("{not json\n\xff\xfe invalid utf-8\nplain log line\n")
	b.WriteString(`{"jsonrpc":"2.0","id":3,"method":"big","params":{"s":"` + strings.Repeat("é", 1<<19) + `"}}` + "\n")
	garbage := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(garbage)
	b.Write(garbage)
	b.WriteString("\nno final newline")
	return b.Bytes()
}

func TestStdioTransparencyThroughCLI(t *testing.T) {
	dir := t.TempDir()
	input := adversarialStream()
	run := runCLI(t, input, "--dir", dir, "--quiet", "--", testagentBin, "echo")
	if run.code != 0 {
		t.Fatalf("exit %d: %s", run.code, run.stderr)
	}
	if run.stdout != string(input) {
		t.Fatalf("the agent's echo came back changed: %d bytes in, %d out", len(input), len(run.stdout))
	}
	// What the capture holds, replayed raw, is what crossed the wire.
	for _, dirName := range []string{"client", "agent"} {
		raw := runCLI(t, nil, "dump", "--dir", dir, "latest", "--format", "raw", "--filter", "dir:"+dirName)
		if raw.code != 0 || raw.stdout != string(input) {
			t.Errorf("dump --format raw --filter dir:%s: exit %d, %d bytes, want the %d bytes sent\n%s",
				dirName, raw.code, len(raw.stdout), len(input), raw.stderr)
		}
	}
}

func TestBadInputErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "20260101T000000Z-broken-1.acpscope")
	if err := os.WriteFile(corrupt, bytes.Repeat([]byte("not a capture "), 500), 0o600); err != nil {
		t.Fatal(err)
	}
	older := filepath.Join(dir, "20250101T000000Z-broken-2.acpscope")
	if err := os.WriteFile(older, bytes.Repeat([]byte("not a capture "), 500), 0o600); err != nil {
		t.Fatal(err)
	}
	readable := finishedCapture(t, t.TempDir())
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"missing --", []string{"--dir", dir, testagentBin}, 2, "must follow '--'"},
		{"demo into an existing file", []string{"demo", "--no-inspect", "--capture", corrupt}, 2, "already exists: the demo records a new capture"},
		{"export over an existing file", []string{"export", readable, "-o", corrupt}, 2, "already exists: export does not overwrite"},
		{"export of a session not there", []string{"export", readable, "--session", "nosuch", "-o", filepath.Join(t.TempDir(), "x.acpscope")}, 2, `no session "nosuch"`},
		{"export with a bad redaction pattern", []string{"export", readable, "--redact-re", "(", "--format", "jsonl"}, 2, "redaction pattern"},
		{"replay recording over an existing file", []string{"replay", "--capture", corrupt, readable, "--", testagentBin}, 2, "--capture " + corrupt + " already exists"},
		{"export of a corrupt capture", []string{"export", corrupt, "-o", filepath.Join(t.TempDir(), "x.acpscope")}, 1, "corrupt"},
		{"lint of a corrupt capture", []string{"lint", corrupt}, 2, "corrupt"},
		{"negative -n: tail", []string{"tail", "--dir", dir, "-n", "-5", readable}, 2, "-n/--lines -5: give the number"},
		{"bad filter: tail names its own help", []string{"tail", readable, "--filter", "kind:bogus"}, 2, "'acpscope tail --help-filter'"},
		{"bad kind lists every kind", []string{"dump", readable, "--filter", "kind:bogus"}, 2, "invalid-json, invalid-utf8, nonprotocol"},
		{"agent not found", []string{"--dir", dir, "--", "no-such-agent-acpscope-test"}, 127, "no-such-agent-acpscope-test"},
		{"unknown command", []string{"dumpp"}, 2, "unknown command"},
		{"unknown capture", []string{"dump", "--dir", dir, "nosuchcapture"}, 2, "acpscope ls"},
		{"unknown capture: show", []string{"show", "--dir", dir, "nosuchcapture", "1"}, 2, "no such capture"},
		{"unknown capture: lint", []string{"lint", "--dir", dir, "nosuchcapture"}, 2, "no such capture"},
		{"unknown capture: tail", []string{"tail", "--dir", dir, "nosuchcapture"}, 2, "no such capture"},
		{"unknown capture: inspect", []string{"inspect", "--dir", dir, "nosuchcapture"}, 2, "no such capture"},
		{"no captures: tail", []string{"tail", "--dir", t.TempDir()}, 2, "no captures in"},
		{"ambiguous capture", []string{"dump", "--dir", dir, "broken"}, 2, "matches 2 captures"},
		{"extra argument: dump", []string{"dump", "--dir", dir, "latest", "extra"}, 2, "expected one CAPTURE"},
		{"extra argument: tail", []string{"tail", "--dir", dir, "a", "b"}, 2, "expected one CAPTURE"},
		{"corrupt capture", []string{"dump", "--dir", dir, corrupt}, 1, "corrupt"},
		{"every capture corrupt: dump", []string{"dump", "--dir", dir}, 1, filepath.Base(corrupt) + ": capture file is corrupt or truncated"},
		{"every capture corrupt: dump says so", []string{"dump", "--dir", dir}, 1, "no capture in " + dir + " can be read"},
		{"every capture corrupt: tail", []string{"tail", "--dir", dir}, 1, "no capture in " + dir + " can be read"},
		{"bad filter", []string{"dump", "--dir", dir, corrupt, "--filter", "method:x and (dir:client"}, 2, "bad --filter"},
		{"bad format", []string{"dump", "--dir", dir, "--format", "xml"}, 2, "unknown --format"},
		{"bad flag", []string{"ls", "--frobnicate"}, 2, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("acpscope %q: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.stderr)
			}
			if r.code == 127 && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("an agent that cannot start should get one line on stderr, got %q", r.stderr)
			}
		})
	}
	ls := runCLI(t, nil, "ls", "--dir", dir)
	if ls.code != 0 || !strings.Contains(ls.stdout, "unreadable") {
		t.Errorf("ls should list the corrupt capture as unreadable, got exit %d:\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	// The reason goes after the table, on stderr, so rows stay narrow.
	for _, line := range strings.Split(ls.stdout, "\n") {
		if len(line) > 120 {
			t.Errorf("ls row of %d characters: %q", len(line), line)
		}
	}
	if !strings.Contains(ls.stderr, filepath.Base(corrupt)) || !strings.Contains(ls.stderr, "corrupt") {
		t.Errorf("ls should say on stderr why %s is unreadable, got %q", filepath.Base(corrupt), ls.stderr)
	}
}

// TestLatestSkipsUnreadable: one unreadable file (a proxy killed while
// creating it, a bad copy) must not hide the captures behind it from
// commands that take the newest; ls still lists it.
func TestLatestSkipsUnreadable(t *testing.T) {
	dir := t.TempDir()
	finishedCapture(t, dir)
	broken := filepath.Join(dir, "20991231T000000Z-broken-9.acpscope")
	if err := os.WriteFile(broken, bytes.Repeat([]byte("not a capture "), 500), 0o600); err != nil {
		t.Fatal(err)
	}
	ls := runCLI(t, nil, "ls", "--dir", dir)
	if first := strings.SplitN(ls.stdout, "\n", 3); len(first) < 2 || !strings.Contains(first[1], "unreadable") {
		t.Fatalf("the unreadable capture should be listed first, as the newest:\n%s", ls.stdout)
	}
	if r := runCLI(t, nil, "dump", "--dir", dir); r.code != 0 || !strings.Contains(r.stdout, "session/new") {
		t.Errorf("dump: exit %d, stdout %q, stderr %q; want the readable capture", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "lint", "--dir", dir, "--no-save"); r.code == 2 || strings.Contains(r.stderr, "corrupt") {
		t.Errorf("lint: exit %d, stderr %q; want the readable capture linted", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "tail", "--dir", dir); r.code != 0 || !strings.Contains(r.stdout, "session/new") {
		t.Errorf("tail: exit %d, stdout %q, stderr %q; want the readable capture", r.code, r.stdout, r.stderr)
	}
}

// startEchoProxy starts the stdio proxy recording into dir around the
// test agent in echo mode, and returns it and the editor's end of its
// stdin, which stays open until the test closes it.
func startEchoProxy(t *testing.T, dir string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	proxy := cliCommand("--dir", dir, "--quiet", "--", testagentBin, "echo")
	editor, err := proxy.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	proxy.Stdout = io.Discard
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	return proxy, editor
}

// TestTailFollowsLiveProxy runs a proxy whose editor side stays open and
// checks that tail prints each message while the proxy runs, then stops
// when it finishes.
func TestTailFollowsLiveProxy(t *testing.T) {
	dir := t.TempDir()
	proxy, editor := startEchoProxy(t, dir)
	defer proxy.Process.Kill()
	send := func(line string) {
		if _, err := io.WriteString(editor, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"first"}`)
	waitFor(t, func() bool { return runCLI(t, nil, "ls", "--dir", dir).stdout != "" })

	tail := cliCommand("tail", "--dir", dir, "-n", "0", "--format", "jsonl", "--filter", "dir:client")
	tailOut, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() { // reader; ends when tail exits
		sc := bufio.NewScanner(tailOut)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// With -n 0 tail prints what arrives once it has connected, which
	// the test cannot see: send a message every 200 ms until one comes out.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitLimit)
	for id, printed := 2, false; !printed; id++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"second"}`, id))
		select {
		case line := <-lines:
			if !strings.Contains(line, `"method":"second"`) {
				t.Errorf("tail printed %q, want a message sent after it started", line)
			}
			printed = true
		case <-tick.C:
		case <-deadline:
			t.Fatalf("tail printed nothing in %v for messages sent through a live proxy", waitLimit)
		}
	}
	editor.Close()
	if err := proxy.Wait(); err != nil {
		t.Fatalf("proxy: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- tail.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("tail exited with %v when the proxy finished", err)
		}
	case <-time.After(waitLimit):
		tail.Process.Kill()
		t.Fatalf("tail kept running %v after the proxy finished", waitLimit)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitLimit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("condition not met within %v", waitLimit)
}

// TestReadersSeeLiveBacklog starts a proxy that has already recorded a few
// thousand messages and keeps running, and checks that dump, show and
// lint see every one of them, not whatever part of the feed's backlog had
// arrived when they looked.
func TestReadersSeeLiveBacklog(t *testing.T) {
	dir := t.TempDir()
	proxy, editor := startEchoProxy(t, dir)
	defer func() {
		editor.Close()
		proxy.Wait()
	}()
	const lines = 2000 // echoed back: twice as many records
	pad := strings.Repeat("x", 200)
	var b bytes.Buffer
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","n":%d,"pad":"%s"}}`+"\n", i, pad)
	}
	if _, err := editor.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return strings.Contains(runCLI(t, nil, "ls", "--dir", dir, "--json").stdout, fmt.Sprintf(`"messages": %d`, 2*lines))
	})
	for i := 0; i < 2; i++ {
		dump := runCLI(t, nil, "dump", "--dir", dir, "--format", "jsonl")
		if n := strings.Count(dump.stdout, "\n"); dump.code != 0 || n < 2*lines {
			t.Fatalf("dump of a live capture: exit %d, %d records, want %d\n%s", dump.code, n, 2*lines, dump.stderr)
		}
	}
	show := runCLI(t, nil, "show", "--dir", dir, "latest", fmt.Sprint(2*lines))
	if show.code != 0 || !strings.Contains(show.stdout, fmt.Sprintf(`"n": %d`, lines)) {
		t.Errorf("show of the last record of a live capture: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	lint := runCLI(t, nil, "lint", "--dir", dir, "--format", "json", "latest")
	// Every message lacks a session/new: the last one must be among the findings.
	var findings []struct{ Seqs []uint64 }
	json.Unmarshal([]byte(lint.stdout), &findings)
	var lastSeen uint64
	for _, f := range findings {
		lastSeen = max(lastSeen, slices.Max(f.Seqs))
	}
	if lint.code != 1 || lastSeen < 2*lines || !strings.Contains(lint.stderr, "still being written") {
		t.Errorf("lint of a live capture: exit %d, last finding at %d, want %d\n%s", lint.code, lastSeen, 2*lines, lint.stderr)
	}
}

// TestErrorWording checks that errors say each thing once, and say what
// to do.
func TestErrorWording(t *testing.T) {
	dir := t.TempDir()
	finishedCapture(t, dir)
	empty := filepath.Join(t.TempDir(), "empty.acpscope")
	w, err := capture.Create(empty, capture.WriterOptions{NoFeed: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	live, err := capture.Create(filepath.Join(t.TempDir(), "live.acpscope"), capture.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	existing := filepath.Join(t.TempDir(), "existing.acpscope")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		want, not string
	}{
		{"filter", []string{"dump", "--dir", dir, "--filter", "method:x and ("}, 2, "bad --filter at byte 14: expected", "filter: at byte"},
		{"show past the end", []string{"show", "--dir", dir, "latest", "9999"}, 1, "no record 9999: the capture holds 1 to ", "reading record"},
		{"show on an empty capture", []string{"show", "--dir", dir, empty, "1"}, 1, "no record 1: the capture is empty", "1 to 0"},
		{"import over a file", []string{"import", empty, "-o", existing}, 2, existing + " already exists: choose another -o, or remove it", "creating capture"},
		{"import a missing file", []string{"import", "/nonexistent/nope.jsonl"}, 2, "/nonexistent/nope.jsonl: file does not exist", "open /nonexistent"},
		{"export a live capture", []string{"export", live.Path(), "--format", "jsonl"}, 2, "is still being written by a running proxy: export it once its agent has exited", "it is live"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, tt.not) {
				t.Errorf("acpscope %q: exit %d, stderr %q; want exit %d, %q and not %q", tt.args, r.code, r.stderr, tt.code, tt.want, tt.not)
			}
		})
	}
	// A failed import must leave the file that was there.
	if b, err := os.ReadFile(existing); err != nil || string(b) != "keep me" {
		t.Errorf("import -o over an existing file changed it: %q, %v", b, err)
	}
}

// TestStdioFormGuidance: the bare proxy form says how to see its flags,
// and says why nothing happened when the agent fails at once or the
// capture file is taken.
func TestStdioFormGuidance(t *testing.T) {
	dir := t.TempDir()
	overview := runCLI(t, nil, "--help")
	if overview.code != 0 || !strings.Contains(overview.stdout, "'acpscope stdio --help' lists its flags") {
		t.Errorf("the overview should say how to see the proxy's flags:\n%s", overview.stdout)
	}
	noDash := runCLI(t, nil, "--dir", dir, "--name", "foo", "false")
	if noDash.code != 2 || !strings.Contains(noDash.stderr, "run 'acpscope stdio --help'") {
		t.Fatalf("missing --: exit %d, %q", noDash.code, noDash.stderr)
	}
	// What the message points to works and shows the proxy's flags.
	help := runCLI(t, nil, "stdio", "--help")
	if help.code != 0 || !strings.Contains(help.stdout, "--capture") || !strings.Contains(help.stdout, "--grace") {
		t.Errorf("acpscope stdio --help: exit %d\n%s%s", help.code, help.stdout, help.stderr)
	}

	failing := runCLI(t, nil, "--dir", dir, "--", testagentBin, "exit-at-once", "3")
	if failing.code != 3 || !strings.Contains(failing.stderr, "the agent exited with status 3 at once") {
		t.Errorf("an agent failing at once: exit %d, stderr %q", failing.code, failing.stderr)
	}
	fine := runCLI(t, nil, "--dir", dir, "--", testagentBin, "exit-at-once", "0")
	if fine.code != 0 || strings.Contains(fine.stderr, "at once") {
		t.Errorf("an agent exiting 0 at once is no failure: exit %d, stderr %q", fine.code, fine.stderr)
	}

	taken := filepath.Join(dir, "taken.acpscope")
	if err := os.WriteFile(taken, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	exists := runCLI(t, nil, "--capture", taken, "--", testagentBin, "echo")
	if exists.code != 0 || !strings.Contains(exists.stderr, "NOT RECORDING: "+taken+" already exists: pick another --capture name") ||
		strings.Count(exists.stderr, taken) != 1 {
		t.Errorf("--capture over an existing file: exit %d, stderr %q", exists.code, exists.stderr)
	}
}

// TestSmallReviewFixes: each case is a message or exit code a new user
// tripped over.
func TestSmallReviewFixes(t *testing.T) {
	dir := t.TempDir()
	finishedCapture(t, dir)
	tests := []struct {
		name         string
		args         []string
		code         int
		out, errText string
	}{
		{"tail -n 0 of a finished capture", []string{"tail", "--dir", dir, "-n", "0"}, 1, "", "-n 0 asks for none of its records"},
		{"tail -n 2 of a finished capture", []string{"tail", "--dir", dir, "-n", "2"}, 0, "SEQ", "showing its last 2 records\n"},
		{"tail -n 1 of a finished capture", []string{"tail", "--dir", dir, "-n", "1"}, 0, "SEQ", "showing its last 1 record\n"},
		{"tail -n 2 with a filter", []string{"tail", "--dir", dir, "-n", "2", "--filter", "dir:client"}, 0, "SEQ", "showing its last 2 records that match the filter"},
		{"dump --from after --to", []string{"dump", "--dir", dir, "--from", "10", "--to", "5"}, 2, "", "--from 10 is after --to 5"},
		{"help for an unknown command", []string{"help", "nosuch"}, 2, "", `unknown command "nosuch"`},
		{"inspect without a terminal", []string{"inspect", "--dir", dir, "latest"}, 1, "", "acpscope inspect: needs a terminal"},
		{"gc --dry-run", []string{"gc", "--dir", dir, "--dry-run", "--older-than", "0s"}, 0, "would delete", "would delete 1 of 1 captures, "},
		{"tail --help-filter", []string{"tail", "--help-filter"}, 0, "Filter language (dump --filter, tail --filter, the inspector", ""},
		{"lint help examples copy-paste", []string{"lint", "--help"}, 0, "  acpscope lint --rules                              # list every rule", ""},
		{"demo usage", []string{"demo", "--help"}, 0, "[--cancel] [--quiet-agent]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.out) || !strings.Contains(r.stderr, tt.errText) {
				t.Errorf("acpscope %q: exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout with %q, stderr with %q",
					tt.args, r.code, r.stdout, r.stderr, tt.code, tt.out, tt.errText)
			}
		})
	}
}

// finishedCapture imports a short conversation into a finished capture
// in dir, quicker than running the demo.
func finishedCapture(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "conversation.jsonl")
	lines := `{"dir":"client","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}}
{"dir":"client","msg":{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess_1"}}}
`
	if err := os.WriteFile(src, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "20260101T000000Z-finished-1.acpscope")
	if _, err := capture.Import(src, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeRunningProxy makes a finished four-record capture look like one a
// proxy is writing: the file locked, a feed socket listening. It returns
// the path, each record's feed line (with the feed's opening line as
// lines[0]), the lock and the listener; the test plays the feed.
func fakeRunningProxy(t *testing.T) (path string, lines map[uint64][]byte, db *bolt.DB, ln net.Listener) {
	t.Helper()
	path = finishedCapture(t, t.TempDir())
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := json.Marshal(map[string]any{"meta": r.Meta(), "last": r.Last()})
	lines = map[uint64][]byte{0: append(head, '\n')}
	for seq := uint64(1); seq <= r.Last(); seq++ {
		rec, _ := r.Record(seq)
		rec.Body, _ = r.Body(seq)
		lines[seq] = append(capture.AppendJSONL(nil, &rec), '\n')
	}
	r.Close()
	if db, err = bolt.Open(path, 0o600, nil); err != nil { // held as a running proxy holds it
		t.Fatal(err)
	}
	sock, err := capture.SocketPath(path)
	if err != nil {
		t.Fatal(err)
	}
	if ln, err = net.Listen("unix", sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); db.Close() })
	return path, lines, db, ln
}

// assertEachPrintedOnce checks tail's JSONL printed records 1 to 4 once.
func assertEachPrintedOnce(t *testing.T, stdout string) {
	t.Helper()
	for seq := 1; seq <= 4; seq++ {
		if n := strings.Count(stdout, fmt.Sprintf(`"seq":%d,`, seq)); n != 1 {
			t.Errorf("record %d printed %d times:\n%s", seq, n, stdout)
		}
	}
}

// playFeed answers up to n subscribers on ln, in turn: each gets what
// answer returns for its turn and the record it asked to start from, and
// is then hung up on. after runs once the turns are over.
func playFeed(ln net.Listener, n int, answer func(turn int, from uint64) []byte, after func()) {
	go func() {
		defer after()
		for turn := 0; turn < n; turn++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var req struct{ From uint64 }
			line, _ := bufio.NewReader(c).ReadBytes('\n')
			json.Unmarshal(line, &req)
			c.Write(answer(turn, req.From))
			c.Close()
		}
	}()
}

// TestTailReadsTheRestFromTheFile: when the live feed ends before tail has
// everything (tail fell behind as the proxy exited, or the proxy died),
// tail prints the rest from the file once the proxy lets go of it.
func TestTailReadsTheRestFromTheFile(t *testing.T) {
	path, lines, db, ln := fakeRunningProxy(t)
	playFeed(ln, 1, func(int, uint64) []byte {
		return slices.Concat(lines[0], lines[1], lines[2]) // only halfway, and no end marker
	}, func() {
		time.Sleep(200 * time.Millisecond)
		ln.Close() // the proxy finishes: its feed's socket goes
		db.Close() // and the file is released
	})
	res := runCLI(t, nil, "tail", "--format", "jsonl", "-n", "100", path)
	if res.code != 0 || !strings.Contains(res.stderr, "read from the file") {
		t.Fatalf("tail: exit %d\n%s", res.code, res.stderr)
	}
	assertEachPrintedOnce(t, res.stdout)
}

// TestTailResumesWhenCutOff: a feed that cuts tail off while the proxy
// still runs is dialled again from the first record not yet printed.
func TestTailResumesWhenCutOff(t *testing.T) {
	path, lines, _, ln := fakeRunningProxy(t)
	playFeed(ln, 2, func(turn int, from uint64) []byte {
		out := slices.Clone(lines[0])
		if turn == 0 { // two records, then cut off
			return slices.Concat(out, lines[1], lines[2], []byte(`{"error":"subscriber too slow"}`+"\n"))
		}
		for seq := max(from, 1); seq <= 4; seq++ {
			out = append(out, lines[seq]...)
		}
		return append(out, `{"end":true}`+"\n"...)
	}, func() {})
	res := runCLI(t, nil, "tail", "--format", "jsonl", "-n", "100", path)
	if res.code != 0 || !strings.Contains(res.stderr, "resumed at record 3") {
		t.Fatalf("tail: exit %d\n%s", res.code, res.stderr)
	}
	assertEachPrintedOnce(t, res.stdout)
}

// TestTailStopsResumingWithoutProgress: a feed that cuts tail off again
// before it printed anything more is not dialled a third time; tail ends
// through the file instead of looping.
func TestTailStopsResumingWithoutProgress(t *testing.T) {
	path, lines, db, ln := fakeRunningProxy(t)
	playFeed(ln, 5, func(turn int, _ uint64) []byte { // every turn is cut; only the first gets records
		out := slices.Clone(lines[0])
		if turn == 0 {
			out = slices.Concat(out, lines[1], lines[2])
		}
		if turn == 1 {
			db.Close() // the file can be read now; the feed still answers
		}
		return append(out, `{"error":"subscriber too slow"}`+"\n"...)
	}, func() { ln.Close() })
	res := runCLI(t, nil, "tail", "--format", "jsonl", "-n", "100", path)
	if res.code != 0 || strings.Count(res.stderr, "resumed at record") != 1 || !strings.Contains(res.stderr, "read from the file") {
		t.Fatalf("tail: exit %d\n%s", res.code, res.stderr)
	}
	assertEachPrintedOnce(t, res.stdout)
}

// TestLsFindingsNeverLinted: a capture never linted shows no count (null
// in JSON), so it does not pass for one lint found clean.
func TestLsFindingsNeverLinted(t *testing.T) {
	dir := t.TempDir()
	finishedCapture(t, dir)
	findings := func() any {
		r := runCLI(t, nil, "ls", "--dir", dir, "--json")
		var rows []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("ls --json: %v, %d rows:\n%s%s", err, len(rows), r.stdout, r.stderr)
		}
		return rows[0]["findings"]
	}
	if f := findings(); f != nil {
		t.Errorf("before lint: findings %v, want null", f)
	}
	if r := runCLI(t, nil, "lint", "--dir", dir); r.code == 2 {
		t.Fatalf("lint: exit 2: %s", r.stderr)
	}
	if f, ok := findings().(float64); !ok || f < 0 {
		t.Errorf("after lint: findings %v, want a count", findings())
	}
}

// TestGCKeepsFreshImports: a session from years ago imported today is
// new here, and storing lint findings in it does not change its age.
func TestGCKeepsFreshImports(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "old.jsonl")
	old := `{"dir":"client","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}},"time":"2020-03-04T05:06:07Z"}
{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}},"time":"2020-03-04T05:06:08Z"}
`
	if err := os.WriteFile(src, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, nil, "import", "--dir", dir, src); r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	for _, step := range []string{"imported", "linted"} {
		if step == "linted" {
			if r := runCLI(t, nil, "lint", "--dir", dir); r.code == 2 {
				t.Fatalf("lint: %s", r.stderr)
			}
		}
		r := runCLI(t, nil, "gc", "--dir", dir, "--older-than", "720h", "--dry-run")
		if r.code != 0 || !strings.Contains(r.stderr, "would delete 0 of 1 captures") {
			t.Errorf("%s: gc --dry-run: exit %d, stderr %q; want the import kept", step, r.code, r.stderr)
		}
	}
	r := runCLI(t, nil, "gc", "--dir", dir, "--older-than", "1ns", "--dry-run")
	if !strings.Contains(r.stderr, "would delete 1 of 1 captures") {
		t.Errorf("gc --older-than 1ns --dry-run: stderr %q; want the capture chosen", r.stderr)
	}
}
