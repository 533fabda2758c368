package cli

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/demo"
)

// startServeCmd runs `acpscope serve` on a free loopback port with the
// demo agent and returns its endpoint URL (http://…/acp).
func startServeCmd(t *testing.T, capturePath string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--capture", capturePath}, extra...)
	return startNetCmd(t, append(args, "--", self(), "demo-agent", "--delay", "0")...)
}

// startNetCmd starts a listening acpscope command and returns the URL it
// announces on stderr.
func startNetCmd(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	return startNetCmdEnv(t, nil, args...)
}

// startNetCmdEnv is startNetCmd with extra environment variables.
func startNetCmdEnv(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(self(), args...)
	cmd.Env = append(mainEnv(), env...)
	u, _ := startAnnouncing(t, cmd)
	return cmd, u
}

// TestCmdServeConnect runs the demo client through `acpscope connect` to
// `acpscope serve` over Streamable HTTP and WebSocket, directly and
// through `acpscope proxy`, as an editor would, and checks every capture:
// metadata, envelopes, no token in clear, nothing for lint to report.
func TestCmdServeConnect(t *testing.T) {
	dir := t.TempDir()
	servePath := filepath.Join(dir, "serve.acpscope")
	const token = "tok-abc123"
	serve, url := startServeCmd(t, servePath, "--auth-token", token)
	proxyPath := filepath.Join(dir, "proxy.acpscope")
	prox, proxied := startNetCmd(t, "proxy", "--listen", "127.0.0.1:0", "--upstream", url, "--capture", proxyPath)
	for _, u := range []string{url, "ws" + strings.TrimPrefix(url, "http"), proxied, "ws" + strings.TrimPrefix(proxied, "http")} {
		connectPath := filepath.Join(dir, strings.NewReplacer(":", "_", "/", "_").Replace(u)+".acpscope")
		stdout, stderr, code := acpscope(t, "demo-client", "--load", "--", self(), "connect", "--auth-token", token, "--capture", connectPath, u)
		if code != 0 || !strings.Contains(stdout, "session/load replayed") {
			t.Fatalf("demo client over %s: exit %d\n%s\n%s", u, code, stdout, stderr)
		}
		checkNetCapture(t, connectPath, "", u)
		noSecret(t, connectPath, token)
		lintClean(t, connectPath)
		if !strings.HasPrefix(u, "ws") {
			shown, _, _ := acpscope(t, "show", connectPath, "1")
			dumped, _, _ := acpscope(t, "dump", "--format", "jsonl", connectPath)
			if !strings.Contains(shown, `"proto":"HTTP/2.0"`) || !strings.Contains(dumped, `"proto":"HTTP/2.0"`) {
				t.Errorf("show and dump of %s do not say HTTP/2.0:\n%s\n%.300s", filepath.Base(connectPath), shown, dumped)
			}
		}
	}
	for _, c := range []*exec.Cmd{prox, serve} {
		c.Process.Signal(syscall.SIGINT)
		if err := c.Wait(); err != nil {
			t.Fatalf("%s after SIGINT: %v", c.Args[1], err)
		}
	}
	checkNetCapture(t, proxyPath, strings.TrimSuffix(strings.TrimPrefix(proxied, "http://"), "/acp"), url)
	noSecret(t, proxyPath, token)
	lintClean(t, proxyPath)
	checkNetCapture(t, servePath, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/acp"), "")
	noSecret(t, servePath, token)
	lintClean(t, servePath)
}

// lintClean checks that lint finds nothing to say about a capture: serve
// and connect follow the RFD, and record it so lint can tell.
func lintClean(t *testing.T, path string) {
	t.Helper()
	stdout, stderr, code := acpscope(t, "lint", "--no-save", path)
	if code != 0 || !strings.Contains(stdout, "0 errors, 0 warnings") {
		t.Errorf("lint %s: exit %d\n%s%s", filepath.Base(path), code, stdout, stderr)
	}
}

func noSecret(t *testing.T, path, secret string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) {
		t.Errorf("%s holds the token in clear", filepath.Base(path))
	}
}

func checkNetCapture(t *testing.T, path, listen, upstream string) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	defer r.Close()
	m := r.Meta()
	if (m.Transport != "http" && m.Transport != "ws") || m.Listen != listen || m.Upstream != upstream {
		t.Errorf("%s meta: transport %q listen %q upstream %q", filepath.Base(path), m.Transport, m.Listen, m.Upstream)
	}
	var messages, withEnvelope int
	r.Scan(1, func(rec *capture.Record) bool {
		if rec.Kind.IsProtocol() {
			messages++
			if rec.HTTP != nil && rec.HTTP.Stream != "" {
				withEnvelope++
			}
		}
		return true
	})
	if messages < 20 || withEnvelope != messages {
		t.Errorf("%s: %d messages, %d with an HTTP envelope", filepath.Base(path), messages, withEnvelope)
	}
}

// TestCmdNetUsage checks the usage errors and the busy-port message.
func TestCmdNetUsage(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().String()
	tests := []struct {
		args   []string
		code   int
		want   string
		absent string // must not be on stderr
	}{
		{[]string{"proxy"}, 2, "--upstream URL is required", ""},
		{[]string{"proxy", "--upstream", "ftp://x/acp"}, 2, "the scheme must be http, https, ws or wss", ""},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/acp", "--listen", busy}, 1, busy + " is in use; pick another --listen port", ""},
		{[]string{"serve", "--listen", busy, "--", "true"}, 1, busy + " is in use; pick another --listen port\n", "address in use"},
		{[]string{"serve", "--listen", "0.0.0.0:99999", "--", "true"}, 2, `acpscope serve: --listen "0.0.0.0:99999": the port must be a number from 0 to 65535`, "warning"},
		{[]string{"proxy", "--listen", "0.0.0.0", "--upstream", "http://127.0.0.1:1/acp"}, 2, `--listen "0.0.0.0" is not HOST:PORT`, "warning"},
		{[]string{"serve"}, 2, "the agent command must follow '--'", ""},
		{[]string{"serve", "--tls-cert", "c.pem", "--", "true"}, 2, "--tls-cert and --tls-key go together", ""},
		{[]string{"connect"}, 2, "want one URL", ""},
		{[]string{"connect", "gopher://x/acp"}, 2, "the scheme must be http, https, ws or wss", ""},
		{[]string{"connect", "--no-capture", "ws://127.0.0.1:1/acp"}, 1, "acpscope connect: cannot reach the server at ws://127.0.0.1:1/acp: ", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, code := acpscope(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
			if tt.absent != "" && strings.Contains(stderr, tt.absent) {
				t.Errorf("stderr %q says %q", stderr, tt.absent)
			}
		})
	}
}

// TestCmdServeReplayAgentNotFound checks that serve and replay name an agent command
// that cannot run at once, pointing at their own command line (not at an
// editor's config), with their documented exit codes.
func TestCmdServeReplayAgentNotFound(t *testing.T) {
	rec := recordDemoCapture(t, demo.AgentOptions{}, demo.ClientOptions{})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"serve absolute", []string{"serve", "--listen", "127.0.0.1:0", "--no-capture", "--", "/nonexistent"}, 127,
			`acpscope serve: cannot start agent "/nonexistent": no such file or directory; check the agent command given to 'acpscope serve'`},
		{"serve in PATH", []string{"serve", "--listen", "127.0.0.1:0", "--no-capture", "--", "acpscope-no-such-agent"}, 127,
			`cannot start agent "acpscope-no-such-agent": executable file not found in $PATH; check the agent command given to 'acpscope serve'`},
		{"replay", []string{"replay", rec, "--no-capture", "--", "/nonexistent"}, 2,
			`acpscope replay: cannot start agent "/nonexistent": no such file or directory; check the agent command given to 'acpscope replay'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := acpscope(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
			if strings.Contains(stderr, "editor") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("want one line without editor advice, got %q", stderr)
			}
		})
	}
}
