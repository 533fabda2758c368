package interop

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit"
)

// runTimeout bounds one client↔agent conversation through the proxy;
// a passing run returns as soon as it ends.
const runTimeout = 3 * time.Minute // generous: the machines the tests run on are shared and busy

// clientPeer is a client program that spawns its agent: the agent's
// command line is appended to argv.
type clientPeer struct {
	name  string
	argv  func(t *testing.T) []string
	stdin string   // what the client reads from its own stdin
	env   []string // added to the client's environment
	dir   bool     // runs in its own temporary directory (it writes real files there)
	check func(t *testing.T, stdout string)
}

// agentPeer is an agent program on stdin/stdout.
type agentPeer struct {
	name   string
	argv   func(t *testing.T) []string
	stderr string // a line the agent always writes to stderr ("" if none)
}

// outcome is everything one run left behind.
type outcome struct {
	clientOut, clientErr, proxyErr string
	clientExit, proxyExit          error
	clientWrote, clientRead        []byte // at the client's end
	agentRead, agentWrote          []byte // at the agent's end
	capture                        string // the capture file
}

// logs returns the run's output for failure messages.
func (o *outcome) logs() string {
	return "client stdout:\n" + o.clientOut + "\nclient stderr:\n" + o.clientErr + "\nproxy stderr:\n" + o.proxyErr
}

// run lets client talk to agent through `acpscope --capture FILE -- AGENT`,
// with the agent behind the recording relay and the client behind the
// bridge (see roles_test.go). flags go to acpscope before "--".
func run(t *testing.T, cl clientPeer, ag agentPeer, flags ...string) *outcome {
	t.Helper()
	goTools(t)
	dir := t.TempDir()
	sockDir, err := os.MkdirTemp("", "acps") // short: unix socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()

	o := &outcome{capture: filepath.Join(dir, "run.acpscope")}
	var clientOut, clientErr, proxyErr testkit.Buffer
	client := startClient(ctx, t, cl, sock, &clientOut, &clientErr)

	_ = ln.SetDeadline(time.Now().Add(runTimeout / 2))
	conn, err := ln.AcceptUnix()
	if err != nil {
		_ = client.Process.Kill()
		_ = client.Wait()
		t.Fatalf("the client never started its agent: %v\nclient stdout:\n%s\nclient stderr:\n%s", err, clientOut.String(), clientErr.String())
	}
	go func() { <-ctx.Done(); _ = conn.Close() }() // unblocks the copiers on timeout

	argv := append(append([]string{"--capture", o.capture}, flags...), "--", os.Args[0])
	proxy := exec.CommandContext(ctx, tools.acpscope, append(argv, ag.argv(t)...)...)
	proxy.Env = append(os.Environ(), envRole+"=relay", envRelayDir+"="+dir)
	proxy.Stderr = &proxyErr
	proxyIn, _ := proxy.StdinPipe()
	proxyOut, _ := proxy.StdoutPipe()
	if err := proxy.Start(); err != nil {
		t.Fatalf("starting acpscope: %v", err)
	}
	var wrote, read testkit.Buffer
	var copiers sync.WaitGroup
	copiers.Add(2)
	go func() { // client→proxy: ends when the client (bridge) hangs up
		defer copiers.Done()
		_ = teeCopy(proxyIn, conn, &wrote)
		_ = proxyIn.Close()
	}()
	go func() { // proxy→client: ends when the proxy closes its stdout
		defer copiers.Done()
		_ = teeCopy(hangUpWriter{w: conn}, proxyOut, &read)
		_ = conn.CloseWrite()
	}()

	o.clientExit = client.Wait()
	copiers.Wait()
	o.proxyExit = proxy.Wait()
	if ctx.Err() != nil {
		t.Errorf("the run timed out after %v", runTimeout)
	}
	o.clientOut, o.clientErr, o.proxyErr = clientOut.String(), clientErr.String(), proxyErr.String()
	o.clientWrote, o.clientRead = wrote.Bytes(), read.Bytes()
	o.agentRead, _ = os.ReadFile(filepath.Join(dir, agentReadFile))
	o.agentWrote, _ = os.ReadFile(filepath.Join(dir, agentWroteFile))
	return o
}

func startClient(ctx context.Context, t *testing.T, cl clientPeer, sock string, stdout, stderr io.Writer) *exec.Cmd {
	t.Helper()
	argv := append(cl.argv(t), os.Args[0]) // the client's "agent" is the bridge
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), cl.env...), envRole+"=bridge", envSock+"="+sock)
	cmd.Stdin = strings.NewReader(cl.stdin)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if cl.dir {
		cmd.Dir = t.TempDir()
	}
	cmd.WaitDelay = 5 * time.Second // a stray grandchild holding the pipes must not hang Wait
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cl.name, err)
	}
	return cmd
}

// hangUpWriter ignores write errors (the client went away), so the
// proxy's output is still drained and recorded to the end.
type hangUpWriter struct{ w io.Writer }

func (h hangUpWriter) Write(p []byte) (int, error) {
	_, _ = h.w.Write(p)
	return len(p), nil
}
