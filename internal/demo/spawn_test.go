package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit"
)

// TestMain re-executes the test binary as a demo agent (a real
// subprocess on real pipes) when DEMO_TEST_PEER says so.
func TestMain(m *testing.M) {
	switch os.Getenv("DEMO_TEST_PEER") {
	case "agent":
		if err := RunAgent(context.Background(), os.Stdin, os.Stdout, AgentOptions{Log: os.Stderr}); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	case "stubborn":
		// An agent that, like some real ones, never exits on stdin EOF
		// and ignores SIGTERM.
		signal.Ignore(syscall.SIGTERM)
		_ = RunAgent(context.Background(), os.Stdin, os.Stdout, AgentOptions{})
		for { // not select{}: with nothing else left, the runtime calls that a deadlock and exits 2
			time.Sleep(time.Hour)
		}
	case "dead":
		os.Exit(127) // like a proxy whose agent could not start
	case "failing":
		_ = RunAgent(context.Background(), os.Stdin, os.Stdout, AgentOptions{})
		os.Exit(7)
	}
	os.Exit(m.Run())
}

func TestClientOverPipes(t *testing.T) {
	stopGrace = 200 * time.Millisecond
	t.Cleanup(func() { stopGrace = 5 * time.Second })
	tests := []struct {
		peer       string
		exitCode   int // 0: no error expected
		stderr     string
		killed     bool
		incomplete bool // the conversation cannot happen
	}{
		{peer: "agent", stderr: "[acpscope-demo-agent] input closed, exiting"},
		{peer: "failing", exitCode: 7},
		{peer: "stubborn", killed: true},
		{peer: "dead", exitCode: 127, incomplete: true},
	}
	for _, tc := range tests {
		t.Run(tc.peer, func(t *testing.T) {
			t.Setenv("DEMO_TEST_PEER", tc.peer)
			t.Setenv("GORACE", "atexit_sleep_ms=0") // -race children otherwise linger 1 s at exit
			var stderr testkit.Buffer
			start := time.Now()
			sum, err := ClientOverPipes(context.Background(), []string{os.Args[0]}, &stderr, ClientOptions{Grace: 200 * time.Millisecond})
			complete := len(sum.Sessions) == 1 && len(sum.Sessions[0].Turns) == 2 && sum.Sessions[0].Turns[1].StopReason == StopEndTurn
			if complete == tc.incomplete {
				t.Errorf("conversation complete = %t, want %t: %+v", complete, !tc.incomplete, sum)
			}
			var exit *exec.ExitError
			switch {
			case tc.killed:
				if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Errorf("err = %v, want death by SIGKILL", err)
				}
				if d := time.Since(start); d > waitLimit {
					t.Errorf("stopping took %v: the ladder did not end it", d)
				}
			case tc.exitCode != 0:
				if !errors.As(err, &exit) || exit.ExitCode() != tc.exitCode {
					t.Errorf("err = %v, want exit status %d", err, tc.exitCode)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.stderr)
			}
		})
	}
	if _, err := ClientOverPipes(context.Background(), []string{"/nonexistent/agent"}, nil, ClientOptions{}); err == nil {
		t.Error("a missing command gave no error")
	}
	var empty bytes.Buffer
	if _, err := ClientOverPipes(context.Background(), nil, &empty, ClientOptions{}); err == nil {
		t.Error("an empty argv gave no error")
	}
}
