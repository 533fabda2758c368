package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit"
)

// listenWait bounds how long a listening acpscope command may take to say
// where it listens; the machine is shared, so it is generous.
const listenWait = 60 * time.Second

// startListening runs a listening acpscope command (serve, proxy) and
// returns it with the endpoint URL it announces on stderr.
func startListening(t *testing.T, name string, args ...string) (*exec.Cmd, string, *testkit.Buffer) {
	t.Helper()
	cmd := exec.Command(tools.acpscope, append([]string{name, "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var log testkit.Buffer
	urls := make(chan string, 1)
	go func() { // stderr reader: ends when the command exits
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			if rest, ok := strings.CutPrefix(sc.Text(), "acpscope "+name+": "); ok && strings.HasPrefix(rest, "http://") {
				select {
				case urls <- strings.Fields(rest)[0]:
				default:
				}
			}
		}
	}()
	select {
	case u := <-urls:
		return cmd, u, &log
	case <-time.After(listenWait):
		t.Fatalf("acpscope %s did not say where it listens:\n%s", name, log.String())
	}
	return nil, "", nil
}

// stopListening ends a listening command as a user would (SIGINT), so
// its capture is finished.
func stopListening(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("acpscope %s after SIGINT: %v", cmd.Args[1], err)
	}
}

// TestTSHTTPClientLoad loads a session with the official TypeScript SDK's
// Streamable HTTP client, through `acpscope serve` and through `acpscope
// proxy` in front of it. The SDK opens the session's stream before it
// POSTs session/load, as the RFD's resume flow does; the replayed history
// must arrive, and before the load's answer. Node's fetch speaks HTTP/1.1
// to an http:// URL, which lint must report against the RFD's HTTP/2
// requirement, and nothing else.
func TestTSHTTPClientLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the TypeScript SDK's HTTP client (a few seconds); skipped with -short")
	}
	goTools(t)
	dir := tsPeers(t)
	for _, viaProxy := range []bool{false, true} {
		name := map[bool]string{false: "serve", true: "proxy→serve"}[viaProxy]
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			serveCapture := filepath.Join(tmp, "serve.acpscope")
			serve, url, serveLog := startListening(t, "serve", "--capture", serveCapture, "--",
				tools.acpscope, "demo-agent", "--delay", "0")
			captures := []string{serveCapture}
			var prox *exec.Cmd
			if viaProxy {
				proxyCapture := filepath.Join(tmp, "proxy.acpscope")
				prox, url, _ = startListening(t, "proxy", "--upstream", url, "--capture", proxyCapture)
				captures = append(captures, proxyCapture)
			}
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			node := exec.CommandContext(ctx, "node", filepath.Join(dir, "http-client.mjs"), url, "sess_old")
			node.Dir = dir
			var nodeErr testkit.Buffer
			node.Stderr = &nodeErr
			out, err := node.Output()
			var seen struct {
				Events  []string `json:"events"`
				Failure *string  `json:"failure"`
			}
			if jerr := json.Unmarshal([]byte(lastLine(string(out))), &seen); jerr != nil || err != nil || seen.Failure != nil {
				t.Fatalf("the TypeScript HTTP client: %v, report %q (%v)\nserve's stderr:\n%s", err, out, jerr, serveLog.String())
			}
			want := "update sess_old user_message_chunk,update sess_old agent_message_chunk,loaded"
			if got := strings.Join(seen.Events, ","); got != want {
				d, _ := exec.Command(tools.acpscope, "dump", serveCapture).CombinedOutput()
				t.Errorf("the client saw %q, want %q: the history, then the load's answer\nclient stderr:\n%s\n%s", got, want, nodeErr.String(), d)
			}
			if prox != nil {
				stopListening(t, prox)
			}
			stopListening(t, serve)
			for _, c := range captures {
				lintHTTP1Only(t, c)
			}
		})
	}
}

// lintHTTP1Only checks that lint's only error on a capture of the
// TypeScript HTTP client is the HTTP/1.1 it speaks.
func lintHTTP1Only(t *testing.T, path string) {
	t.Helper()
	out, _ := exec.Command(tools.acpscope, "lint", "--no-save", "--format", "json", path).Output()
	var findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
	}
	if err := json.Unmarshal(out, &findings); err != nil {
		t.Fatalf("lint --format json %s: %v\n%s", filepath.Base(path), err, out)
	}
	var rules []string
	for _, f := range findings {
		if f.Severity == "error" || f.Severity == "warning" {
			rules = append(rules, f.Rule)
		}
	}
	if strings.Join(rules, ",") != "http/http2" {
		t.Errorf("lint %s: findings %v, want http/http2 alone\n%s", filepath.Base(path), rules, out)
	}
}

// TestConnectTSHTTPServerLoad loads 50 sessions in a row through
// `acpscope connect` from the official TypeScript SDK's Streamable HTTP
// server, which numbers no events: connect opens each session's stream
// before the load and holds the answer until that stream is quiet, so
// every history reaches stdout before its answer. The server speaks only
// HTTP/1.1, so connect must fall back to it and say so.
func TestConnectTSHTTPServerLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the TypeScript SDK's HTTP server (a few seconds); skipped with -short")
	}
	goTools(t)
	dir := tsPeers(t)
	url := startTSServer(t, dir, "http-server.mjs")

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	capturePath := filepath.Join(t.TempDir(), "connect.acpscope")
	connect := exec.CommandContext(ctx, tools.acpscope, "connect", "--capture", capturePath, url)
	stdin, _ := connect.StdinPipe()
	stdout, _ := connect.StdoutPipe()
	var connectErr testkit.Buffer
	connect.Stderr = &connectErr
	if err := connect.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	until := func(id int) []string {
		var got []string
		want := `"id":` + strconv.Itoa(id) + `,`
		for lines.Scan() {
			got = append(got, lines.Text())
			if strings.Contains(lines.Text(), want) && !strings.Contains(lines.Text(), `"method"`) {
				return got
			}
		}
		t.Fatalf("connect's stdout ended before the answer to %d; got %q\n%s", id, got, connectErr.String())
		return nil
	}
	send := func(line string) { _, _ = stdin.Write([]byte(line + "\n")) }
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	until(0)
	const loads = 50
	for i := 1; i <= loads; i++ {
		sid := "sess_" + strconv.Itoa(i)
		send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"session/load","params":{"sessionId":"` + sid + `","cwd":"/w","mcpServers":[]}}`)
		got := until(i)
		if len(got) != 3 || !strings.Contains(got[0], sid) || !strings.Contains(got[1], sid) {
			t.Fatalf("load %d of %d: stdout up to its answer %q; want the two history updates of %s first", i, loads, got, sid)
		}
	}
	stdin.Close()
	if err := connect.Wait(); err != nil {
		t.Fatalf("connect: %v\n%s", err, connectErr.String())
	}
	if !strings.Contains(connectErr.String(), "HTTP/1.1 to "+url+" (the server does not speak cleartext HTTP/2") {
		t.Errorf("connect did not say it fell back to HTTP/1.1:\n%s", connectErr.String())
	}
	lintHTTP1Only(t, capturePath)
}

// startTSServer runs one of the TypeScript servers in testdata/ts and
// returns the endpoint URL it prints first.
func startTSServer(t *testing.T, dir, script string) string {
	t.Helper()
	server := exec.Command("node", filepath.Join(dir, script))
	server.Dir = dir
	serverOut, _ := server.StdoutPipe()
	var serverErr testkit.Buffer
	server.Stderr = &serverErr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	urls := make(chan string, 1)
	go func() { // stdout reader: ends when the server exits
		sc := bufio.NewScanner(serverOut)
		for sc.Scan() {
			select {
			case urls <- sc.Text():
			default:
			}
		}
	}()
	select {
	case url := <-urls:
		return url
	case <-time.After(listenWait):
		t.Fatalf("node %s did not start:\n%s", script, serverErr.String())
	}
	return ""
}
