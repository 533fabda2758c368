package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartCannotStart(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"not in PATH", []string{"acpscope-no-such-agent"}, `cannot start agent "acpscope-no-such-agent": executable file not found in $PATH; check the command in your editor's agent config`},
		{"missing path", []string{"/nonexistent/agent"}, `cannot start agent "/nonexistent/agent": no such file or directory; check`},
		{"not executable", []string{notExec}, `: permission denied; check the command`},
		{"empty", nil, `cannot start agent "": no command given after --`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Start(context.Background(), tt.argv, Options{})
			if err == nil {
				a.Shutdown()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, ErrCannotStart) {
				t.Errorf("error %v does not wrap ErrCannotStart", err)
			}
			var se *StartError
			if !errors.As(err, &se) || se.ExitCode() != 127 {
				t.Errorf("error %v is not a *StartError with exit code 127", err)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error = %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

func TestAgentExitStatus(t *testing.T) {
	tests := []struct {
		name   string
		mode   []string
		code   int
		signal syscall.Signal
	}{
		{"exit 0", []string{"exit-at-once"}, 0, 0},
		{"exit 3", []string{"exit-at-once", "3"}, 3, 0},
		{"exit at stdin EOF", []string{"exit", "5"}, 5, 0},
		{"killed by SIGTERM", []string{"kill-self", "TERM"}, 128 + 15, syscall.SIGTERM},
		{"killed by SIGKILL", []string{"kill-self", "KILL"}, 128 + 9, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := startTestAgent(t, Options{}, tt.mode...)
			a.CloseStdin()
			go io.Copy(io.Discard, a.Stdout)
			st := a.Wait()
			if st.Code != tt.code || st.Signal != tt.signal {
				t.Errorf("status = %+v, want code %d signal %v", st, tt.code, tt.signal)
			}
		})
	}
}

func TestAgentShutdownLadder(t *testing.T) {
	const grace = 200 * time.Millisecond
	tests := []struct {
		name    string
		mode    []string
		code    int
		minTime time.Duration // the ladder steps it must have waited through
	}{
		{"exits on stdin EOF", []string{"echo"}, 0, 0},
		{"ignores EOF: SIGTERM after grace", []string{"ignore-eof"}, 128 + 15, grace},
		{"ignores EOF and SIGTERM: SIGKILL", []string{"ignore-eof", "--ignore-term"}, 128 + 9, 2 * grace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := startTestAgent(t, Options{Grace: grace}, tt.mode...)
			awaitEcho(t, a) // it echoes once its signal handling is set up
			start := time.Now()
			st := a.Shutdown()
			took := time.Since(start)
			if st.Code != tt.code {
				t.Errorf("status = %+v, want code %d", st, tt.code)
			}
			if took < tt.minTime {
				t.Errorf("shutdown took %v, less than the %v of ladder steps it must wait through", took, tt.minTime)
			}
		})
	}
}

func TestAgentCancelContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a, err := Start(ctx, agentArgv("ignore-eof"), Options{Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-a.Done():
	case <-time.After(stdioWait):
		a.Kill()
		t.Fatalf("agent still running %v after its context was cancelled", stdioWait)
	}
	if st := a.Wait(); st.Signal != syscall.SIGTERM {
		t.Errorf("status = %+v, want death by SIGTERM", st)
	}
}

// awaitEcho sends a line to an echoing agent and reads it back.
func awaitEcho(t *testing.T, a *Process) {
	t.Helper()
	const line = "ready?\n"
	if _, err := a.Stdin.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	a.Stdout.SetReadDeadline(time.Now().Add(stdioWait))
	defer a.Stdout.SetReadDeadline(time.Time{})
	got := make([]byte, len(line))
	if _, err := io.ReadFull(a.Stdout, got); err != nil || string(got) != line {
		t.Fatalf("the agent echoed %q, %v; want %q", got, err, line)
	}
}

// startTestAgent starts the test agent and stops it at cleanup.
func startTestAgent(t *testing.T, opts Options, mode ...string) *Process {
	t.Helper()
	a, err := Start(context.Background(), agentArgv(mode...), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Kill()
		a.Wait()
		a.CloseStdin()
		a.Stdout.Close()
		a.Stderr.Close()
	})
	return a
}
