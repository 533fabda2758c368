package interop

// The test binary plays two small helper roles, chosen by INTEROP_ROLE,
// so that every byte is observed at the two places that matter:
//
//	client ──pipes── bridge ══unix socket══ test ──pipes── acpscope ──pipes── relay ──pipes── agent
//	                          (records what the client            (records what the agent
//	                           wrote and read)                     read and wrote)
//
//   - relay sits between the proxy and the agent: it spawns the agent and
//     copies its stdin and stdout through, writing each chunk to a file
//     before forwarding it. Its files are "what the agent read" and "what
//     the agent wrote".
//   - bridge is the "agent" the client spawns: it joins the client's pipes
//     to a unix socket on which the test listens. The test process (not
//     the bridge) spawns acpscope on ordinary pipes, exactly as an editor
//     would, and records what crosses between the socket and the proxy.
//     That record is "what the client wrote" and "what the client read":
//     the bridge and the socket are plain byte copies.
//
// Why a bridge instead of a second relay: peers such as the Go SDK's
// example client SIGKILL the agent they spawned when they are done. A
// killed relay would orphan acpscope, which the test could then neither
// wait for nor reap. With the bridge the proxy stays the test's own child;
// the client killing the bridge is just an editor hanging up.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
)

const (
	envRole     = "INTEROP_ROLE"
	envSock     = "INTEROP_SOCK"
	envRelayDir = "INTEROP_RELAY_DIR"
)

// The relay's record files, in INTEROP_RELAY_DIR.
const (
	agentReadFile  = "agent-read"
	agentWroteFile = "agent-wrote"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envRole) {
	case "relay":
		os.Exit(relay(os.Args[1:], os.Getenv(envRelayDir)))
	case "bridge":
		os.Exit(bridge(os.Getenv(envSock)))
	}
	code := m.Run()
	cleanupTools()
	os.Exit(code)
}

// lockedFile serialises writes and the final Close.
type lockedFile struct {
	mu sync.Mutex
	f  *os.File
}

func (l *lockedFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

func (l *lockedFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// teeCopy copies src to dst, writing every chunk to rec first.
func teeCopy(dst io.Writer, src io.Reader, rec io.Writer) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := rec.Write(buf[:n]); werr != nil {
				return werr
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// relay runs argv with its stdin and stdout copied through and recorded
// in dir; it exits as the agent did.
func relay(argv []string, dir string) int {
	if len(argv) == 0 || dir == "" {
		fmt.Fprintln(os.Stderr, "relay: need an agent command and", envRelayDir)
		return 2
	}
	read, err1 := os.Create(dir + "/" + agentReadFile)
	wrote, err2 := os.Create(dir + "/" + agentWroteFile)
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	readRec, wroteRec := &lockedFile{f: read}, &lockedFile{f: wrote}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = withoutRole(os.Environ())
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 127
	}
	go func() { // client→agent copier; ends at the proxy's EOF or the agent's exit
		_ = teeCopy(stdin, os.Stdin, readRec)
		_ = stdin.Close()
	}()
	_ = teeCopy(os.Stdout, stdout, wroteRec) // until the agent closes its stdout
	err := cmd.Wait()
	_ = readRec.Close()
	_ = wroteRec.Close()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

func withoutRole(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if len(kv) < len(envRole)+1 || kv[:len(envRole)+1] != envRole+"=" {
			out = append(out, kv)
		}
	}
	return out
}

// bridge joins stdin/stdout to the test's unix socket.
func bridge(sock string) int {
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bridge:", err)
		return 2
	}
	conn := c.(*net.UnixConn)
	go func() { // client→test copier; ends at the client's EOF
		_, _ = io.Copy(conn, os.Stdin)
		_ = conn.CloseWrite()
	}()
	_, _ = io.Copy(os.Stdout, conn) // until the test closes its side
	return 0
}
