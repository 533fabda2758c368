package cli

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const initializeLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`

// runEnv runs acpscope with extra environment and stdin, for at most
// two minutes.
func runEnv(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := cliCommand(args...)
	cmd.Env = append(append(cmd.Env, "ACPSCOPE_DIR="+t.TempDir()), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A command that should have refused to start may be listening: a
	// generous bound turns that into a failure, not a hung test.
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running acpscope %q: %v", args, err)
	}
	return result{out.String(), errOut.String(), code}
}

var announced = regexp.MustCompile(`^acpscope (serve|proxy): (http://\S+)`)

// startListener starts serve or proxy with extra environment and returns
// its endpoint (with a loopback host, whatever it listens on) and what it
// said on stderr before announcing it.
func startListener(t *testing.T, env []string, args ...string) (cmd *exec.Cmd, endpoint, said string) {
	t.Helper()
	cmd = cliCommand(args...)
	cmd.Env = append(cmd.Env, env...)
	u, said := startAnnouncing(t, cmd)
	if i := strings.LastIndex(u, ":"); i > 0 {
		u = "http://127.0.0.1" + u[i:]
	}
	return cmd, u, said
}

// startAnnouncing starts cmd, a listening serve or proxy, and returns the
// URL it announces on stderr and what it said before; the process is
// killed when the test ends.
func startAnnouncing(t *testing.T, cmd *exec.Cmd) (url, said string) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	type hello struct{ url, before string }
	hellos := make(chan hello, 1)
	go func() { // stderr reader: ends when the command exits
		var before strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := announced.FindStringSubmatch(sc.Text()); m != nil {
				hellos <- hello{m[2], before.String()}
				continue
			}
			before.WriteString(sc.Text() + "\n")
		}
		close(hellos)
	}()
	select {
	case h, ok := <-hellos:
		if !ok {
			t.Fatalf("%q exited without listening", cmd.Args)
		}
		return h.url, h.before
	case <-time.After(waitLimit):
		t.Fatalf("%q did not say where it listens within %v", cmd.Args, waitLimit)
	}
	return "", ""
}

// rebound posts initialize as a page using DNS rebinding would.
func rebound(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initializeLine))
	req.Host = "evil.example"
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// TestCmdGuardRefusesToStart checks the refusals before listening: no
// token beyond loopback, contradicting flags, bad allow-lists, token
// files that are missing or readable by others.
func TestCmdGuardRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose")
	os.WriteFile(loose, []byte("tok-abc123\n"), 0o644)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	agent := []string{"--", self(), "demo-agent"}
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"serve beyond loopback", nil, append([]string{"serve", "--listen", "0.0.0.0:0", "--no-capture"}, agent...),
			"acpscope serve: refusing to listen on 0.0.0.0:0 without a token: anyone who can reach it could run the agent as you; give --auth-token-file FILE"},
		{"proxy beyond loopback", nil, []string{"proxy", "--listen", "[::]:0", "--upstream", "http://127.0.0.1:1/acp", "--no-capture"},
			"acpscope proxy: refusing to listen on [::]:0 without a token"},
		{"--no-auth with a token", nil, append([]string{"serve", "--listen", "0.0.0.0:0", "--no-auth", "--auth-token", "tok-abc123"}, agent...),
			"--no-auth and a token from --auth-token contradict each other"},
		{"--no-auth with the variable", []string{envAuthToken + "=tok-abc123"}, append([]string{"serve", "--listen", "0.0.0.0:0", "--no-auth"}, agent...),
			"--no-auth and a token from $ACPSCOPE_AUTH_TOKEN contradict each other"},
		{"two tokens", nil, append([]string{"serve", "--auth-token", "a", "--auth-token-file", loose}, agent...),
			"--auth-token and --auth-token-file both give a token: keep one"},
		{"bad --allow-host", nil, append([]string{"serve", "--allow-host", "http://myhost.lan"}, agent...),
			`--allow-host "http://myhost.lan" is not a host name`},
		{"bad --allow-origin", nil, []string{"proxy", "--upstream", "http://127.0.0.1:1/acp", "--allow-origin", "myhost.lan"},
			`--allow-origin "myhost.lan" is not an origin`},
		{"token with a space", []string{envAuthToken + "=two words"}, []string{"connect", "http://127.0.0.1:1/acp"},
			"the token from $ACPSCOPE_AUTH_TOKEN has a space"},
		{"connect: no token file", nil, []string{"connect", "--auth-token-file", filepath.Join(dir, "none"), "http://127.0.0.1:1/acp"},
			"no token file " + filepath.Join(dir, "none") + ": start acpscope serve with --auth-token-file"},
		{"connect: file readable by others", nil, []string{"connect", "--auth-token-file", loose, "http://127.0.0.1:1/acp"},
			"can be read by others (mode 0644): run chmod 600 " + loose},
		{"serve: file readable by others", nil, append([]string{"serve", "--auth-token-file", loose}, agent...),
			"can be read by others (mode 0644)"},
		{"proxy: empty upstream token file", nil, []string{"proxy", "--upstream", "http://127.0.0.1:1/acp", "--upstream-auth-token-file", empty},
			"token file " + empty + " is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runEnv(t, tt.env, "", tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

// TestCmdGuardStarts checks what serve and proxy say when they start
// beyond loopback with --no-auth or a token, or with a token on the
// command line, and that Host and Origin are checked all the same.
func TestCmdGuardStarts(t *testing.T) {
	agent := []string{"--", self(), "demo-agent"}
	tests := []struct {
		name  string
		env   []string
		args  []string
		token string
		said  string
	}{
		{"serve --no-auth", nil, append([]string{"serve", "--listen", "0.0.0.0:0", "--no-auth", "--no-capture"}, agent...), "",
			"acpscope serve: warning: --no-auth: listening on 0.0.0.0:0, which is not loopback, without a token: anyone who can reach it can run the agent as you"},
		{"proxy --no-auth", nil, []string{"proxy", "--listen", "0.0.0.0:0", "--no-auth", "--no-capture", "--upstream", "http://127.0.0.1:1/acp"}, "",
			"acpscope proxy: warning: --no-auth: listening on 0.0.0.0:0, which is not loopback, without a token: anyone who can reach it can use the upstream through this proxy"},
		{"serve with a token, no TLS", []string{envAuthToken + "=tok-abc123"}, append([]string{"serve", "--listen", "0.0.0.0:0", "--no-capture"}, agent...), "tok-abc123",
			"acpscope serve: warning: listening on 0.0.0.0:0 without TLS: the token and every message cross the network in clear"},
		{"token on the command line", nil, append([]string{"serve", "--listen", "127.0.0.1:0", "--no-capture", "--auth-token", "tok-abc123"}, agent...), "tok-abc123",
			"acpscope serve: hint: --auth-token shows in ps to every local user; --auth-token-file FILE or $ACPSCOPE_AUTH_TOKEN keeps it out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, endpoint, said := startListener(t, tt.env, tt.args...)
			if !strings.Contains(said, tt.said) {
				t.Errorf("stderr %q lacks %q", said, tt.said)
			}
			if status, body := rebound(t, endpoint, tt.token); status != http.StatusForbidden || !strings.Contains(body, "--allow-host evil.example") {
				t.Errorf("rebinding request: %d %q, want 403", status, body)
			}
		})
	}
}

// TestCmdTokenFile is the token handed from serve to connect without a
// command line showing it: serve creates the file (0600, in a 0700
// directory it makes) and keeps it across restarts; connect reads it,
// directly and through a proxy that reads it too; the variable works as
// well; no token or a wrong one gets 401 on each path.
func TestCmdTokenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf", "acpscope")
	file := filepath.Join(dir, "token")
	serveArgs := []string{"serve", "--listen", "127.0.0.1:0", "--no-capture", "--auth-token-file", file, "--", self(), "demo-agent", "--delay", "0"}
	serve, _, said := startListener(t, nil, serveArgs...)
	if !strings.Contains(said, "acpscope serve: wrote a fresh token to "+file+" (mode 0600)") {
		t.Errorf("serve did not say it wrote the token file: %q", said)
	}
	for path, want := range map[string]os.FileMode{file: 0o600, dir: 0o700} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: %v, mode %v, want %v", path, err, st.Mode().Perm(), want)
		}
	}
	raw, _ := os.ReadFile(file)
	token := strings.TrimSpace(string(raw))
	if len(token) < 40 {
		t.Fatalf("token %q is too short to be 256 random bits", token)
	}
	// A restart keeps the token its clients hold.
	serve.Process.Kill()
	serve.Wait()
	_, endpoint, said := startListener(t, nil, serveArgs...)
	if raw2, _ := os.ReadFile(file); string(raw2) != string(raw) || strings.Contains(said, "wrote") {
		t.Fatalf("a restart replaced the token (%q)", said)
	}
	_, proxied, _ := startListener(t, nil, "proxy", "--listen", "127.0.0.1:0", "--no-capture", "--auth-token-file", file, "--upstream", endpoint)
	ws := func(u string) string { return "ws" + strings.TrimPrefix(u, "http") }

	for _, u := range []string{endpoint, ws(proxied)} {
		r := runEnv(t, nil, "", "demo-client", "--load", "--", self(), "connect", "--no-capture", "--auth-token-file", file, u)
		if r.code != 0 || !strings.Contains(r.stdout, "session/load replayed") {
			t.Fatalf("demo client with the token file over %s: exit %d\n%s\n%s", u, r.code, r.stdout, r.stderr)
		}
	}
	tests := []struct {
		name   string
		env    []string
		url    string
		code   int
		stderr string
	}{
		{"variable, serve", []string{envAuthToken + "=" + token}, ws(endpoint), 0, ""},
		{"variable, proxy", []string{envAuthToken + "=" + token}, proxied, 0, ""},
		{"no token, serve", nil, ws(endpoint), 1, "answered 401 Unauthorized: acpscope serve: refused: missing or wrong bearer token"},
		// Over HTTP connect also answers the editor's request with the
		// refusal as a JSON-RPC error before it ends.
		{"wrong token, serve", []string{envAuthToken + "=tok-wrong"}, endpoint, 1, "answered 401 Unauthorized: acpscope serve: refused: missing or wrong bearer token; send \"Authorization: Bearer TOKEN\" with the token acpscope serve was started with; give connect the server's token"},
		{"no token, proxy", nil, ws(proxied), 1, "answered 401 Unauthorized: acpscope proxy: refused: missing or wrong bearer token"},
		{"wrong token, proxy", []string{envAuthToken + "=tok-wrong"}, proxied, 1, "answered 401 Unauthorized: acpscope proxy: refused: missing or wrong bearer token; send \"Authorization: Bearer TOKEN\" with the token acpscope proxy was started with; give connect the server's token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runEnv(t, tt.env, initializeLine+"\n", "connect", "--no-capture", tt.url)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
			answered := `"protocolVersion":1`
			switch {
			case tt.url == endpoint || tt.url == proxied && tt.stderr != "":
				// Over HTTP the editor's request gets the refusal.
				answered = `{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"acpscope connect: the server at `
			case tt.stderr != "":
				answered = ""
			}
			if !strings.Contains(r.stdout, answered) {
				t.Fatalf("stdout %q lacks %q", r.stdout, answered)
			}
		})
	}
}

// TestRedactArgs checks that no token flag's value reaches a capture's
// metadata.
func TestRedactArgs(t *testing.T) {
	got := redactArgs([]string{"proxy", "--auth-token", "a1", "--upstream-auth-token=b2", "--auth-token-file", "f", "--upstream-auth-token", "c3", "--", "--auth-token", "agent's"})
	want := []string{"proxy", "--auth-token", "<redacted>", "--upstream-auth-token=<redacted>", "--auth-token-file", "f", "--upstream-auth-token", "<redacted>", "--", "--auth-token", "agent's"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestEnsureTokenFileRace starts "servers" at once on a missing token
// file: one writes it, every one gets the same whole token.
func TestEnsureTokenFileRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	const n = 8
	tokens := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		go func() { // one server: ends after one call
			tok, err := ensureTokenFile("serve", path)
			tokens <- tok
			errs <- err
		}()
	}
	first := ""
	for range n {
		tok, err := <-tokens, <-errs
		if err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = tok
		}
		if tok != first || len(tok) != 43 {
			t.Fatalf("tokens %q and %q", first, tok)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
