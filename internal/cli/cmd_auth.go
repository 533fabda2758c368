package cli

// The doors of serve, proxy and connect: the Host/Origin allow-lists and
// the bearer token, from a flag, a file or the environment.

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/acpscope/acpscope/internal/door"
	flag "github.com/spf13/pflag"
)

// Where tokens come from besides the flags: the environment keeps them
// out of ps, as the files do.
const (
	envAuthToken         = "ACPSCOPE_AUTH_TOKEN"
	envUpstreamAuthToken = "ACPSCOPE_UPSTREAM_AUTH_TOKEN"
)

// maxTokenFile bounds what a token file may hold.
const maxTokenFile = 4096

// guardFlags declares the door flags of a listener (serve, proxy).
func guardFlags(fs *flag.FlagSet) {
	fs.StringArray("allow-host", nil, "a Host that names this server besides its listen address and loopback, NAME or NAME:PORT (repeatable; * allows any)")
	fs.StringArray("allow-origin", nil, "browser Origin allowed besides our own, SCHEME://HOST[:PORT] (repeatable; * allows any)")
	fs.String("auth-token", "", "require 'Authorization: Bearer TOKEN' (shows in ps: prefer --auth-token-file or $"+envAuthToken+")")
	fs.String("auth-token-file", "", "require the token in FILE, created (mode 0600) with a fresh random token if missing")
	fs.Bool("no-auth", false, "listen beyond loopback without a token (UNSAFE: anyone who reaches the port gets in)")
}

// clientTokenFlags declares connect's token flags.
func clientTokenFlags(fs *flag.FlagSet) {
	fs.String("auth-token", "", "send 'Authorization: Bearer TOKEN' (shows in ps: prefer --auth-token-file or $"+envAuthToken+")")
	fs.String("auth-token-file", "", "send the token in FILE (as serve --auth-token-file writes it)")
}

// guardOptions reads the allow-lists and checks them, before anything
// opens; Listen is filled in once the listener is bound.
// listenerOptions reads what serve and proxy share about their
// listener: where it listens, and who may come in (Host, Origin, token).
func listenerOptions(fs *flag.FlagSet, cmd string) (door.ListenOptions, door.GuardOptions, error) {
	lo, err := listenOptions(fs)
	if err != nil {
		return lo, door.GuardOptions{}, err
	}
	guard, err := guardOptions(fs)
	if err != nil {
		return lo, guard, err
	}
	guard.AuthToken, err = serverToken(fs, cmd, lo)
	return lo, guard, err
}

func guardOptions(fs *flag.FlagSet) (door.GuardOptions, error) {
	var g door.GuardOptions
	g.AllowHosts, _ = fs.GetStringArray("allow-host")
	g.AllowOrigins, _ = fs.GetStringArray("allow-origin")
	if _, err := door.NewGuard(g); err != nil {
		return g, usageErrorf("%v", err)
	}
	return g, nil
}

// serverToken is the token a listener requires, and its refusal to
// listen beyond loopback without one: such a port is open to the
// network, and the agent runs as the user. --no-auth says the user
// means it; it is then said on stderr.
func serverToken(fs *flag.FlagSet, cmd string, lo door.ListenOptions) (string, error) {
	token, from, err := readToken(fs, cmd, "auth-token", envAuthToken, true)
	if err != nil {
		return "", err
	}
	noAuth, _ := fs.GetBool("no-auth")
	if noAuth && token != "" {
		return "", usageErrorf("--no-auth and a token from %s contradict each other: drop one", from)
	}
	if loopbackListen(lo.Addr) {
		return token, nil
	}
	what := map[string]string{"serve": "run the agent as you", "proxy": "use the upstream through this proxy"}[cmd]
	switch {
	case token == "" && !noAuth:
		return "", usageErrorf("refusing to listen on %s without a token: anyone who can reach it could %s; "+
			"give --auth-token-file FILE (created with a fresh token if missing) or set $%s, "+
			"or --no-auth if everyone who can reach that address is trusted", lo.Addr, what, envAuthToken)
	case noAuth:
		warnf(cmd, "--no-auth: listening on %s, which is not loopback, without a token: anyone who can reach it can %s", lo.Addr, what)
	case lo.TLSCert == "":
		warnf(cmd, "listening on %s without TLS: the token and every message cross the network in clear; add --tls-cert and --tls-key", lo.Addr)
	}
	return token, nil
}

// loopbackListen reports whether a --listen address stays on this
// machine; an empty host means loopback (see door.Listen).
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && (host == "" || door.IsLoopback(addr))
}

// readToken reads a token from --NAME, --NAME-file or $env, at most one
// of the flags. With create, a missing file is made with a fresh token.
// from says where it came from, for messages.
func readToken(fs *flag.FlagSet, cmd, name, env string, create bool) (token, from string, err error) {
	flagTok, _ := fs.GetString(name)
	file, _ := fs.GetString(name + "-file")
	file = expandHome(file)
	switch {
	case flagTok != "" && file != "":
		return "", "", usageErrorf("--%s and --%s-file both give a token: keep one", name, name)
	case flagTok != "":
		fmt.Fprintf(os.Stderr, "acpscope %s: hint: --%s shows in ps to every local user; --%s-file FILE or $%s keeps it out\n", cmd, name, name, env)
		token, from = flagTok, "--"+name
	case file != "" && create:
		token, err = ensureTokenFile(cmd, file)
		from = "--" + name + "-file"
	case file != "":
		token, err = readTokenFile(file)
		from = "--" + name + "-file"
	default:
		token, from = os.Getenv(env), "$"+env
	}
	if err != nil {
		return "", "", usageErrorf("%v", err)
	}
	if err := checkToken(token); err != nil {
		return "", "", usageErrorf("the token from %s %v", from, err)
	}
	return token, from, nil
}

// checkToken keeps a token to what an HTTP header carries unchanged:
// visible ASCII, no spaces.
func checkToken(token string) error {
	for _, c := range []byte(token) {
		if c <= ' ' || c >= 0x7f {
			return errors.New("has a space, control or non-ASCII character: use letters, digits and punctuation only")
		}
	}
	return nil
}

// ensureTokenFile reads the token in path, first creating the file with
// a fresh random token (mode 0600, missing directories 0700) when it does
// not exist. The file appears whole or not at all (written aside, then
// linked into place, which fails if it exists): of two servers starting
// at once, one writes it and the other reads what it wrote.
func ensureTokenFile(cmd, path string) (string, error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return readTokenFile(path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the token file's directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".acpscope-token-*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("creating token file: %w", err)
	}
	defer os.Remove(tmp.Name())
	token := newToken()
	_, err = io.WriteString(tmp, token+"\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return readTokenFile(path)
	case err != nil:
		return "", fmt.Errorf("writing token file %s: %w", path, err)
	}
	fmt.Fprintf(os.Stderr, "acpscope %s: wrote a fresh token to %s (mode 0600); clients read it with: acpscope connect --auth-token-file %s URL\n",
		cmd, path, shellQuote(path))
	return token, nil
}

// readTokenFile reads a token file: a regular file, no larger than
// maxTokenFile, that only its owner can read (as ssh asks of keys).
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no token file %s: start acpscope serve with --auth-token-file %s, which creates it, or write the server's token there (chmod 600)", path, shellQuote(path))
	}
	if err != nil {
		return "", fmt.Errorf("opening token file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s is not a regular file", path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("token file %s can be read by others (mode %04o): run chmod 600 %s", path, perm, shellQuote(path))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("reading token file %s: %w", path, err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("token file %s is larger than %d bytes: is it the right file?", path, maxTokenFile)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("token file %s is empty: delete it and let serve --auth-token-file create it, or write a token there", path)
	}
	return token, nil
}

// newToken returns 256 random bits, base64url: a token no one guesses.
func newToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// expandHome turns a leading ~/ into the home directory: editors start
// connect from their agent config without a shell to do it.
func expandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return path
}

func warnf(cmd, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "acpscope %s: warning: %s\n", cmd, fmt.Sprintf(format, args...))
}
