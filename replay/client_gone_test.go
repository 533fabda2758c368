package replay

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestReplayClientAgentExits replays to real processes that exit early and
// checks that the replay says how the agent ended and what it waited for,
// never "broken pipe".
func TestReplayClientAgentExits(t *testing.T) {
	const initReply = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"demo","version":"1.0"}}}`
	tests := []struct {
		name     string
		script   string
		wantErr  string // a *GoneError with this text
		wantNote string // else a note with this text
	}{
		{"exits at once", "exit 1", "the agent exited (status 1) before answering initialize [0]", ""},
		{"reads initialize then exits", "read line; exit 4", "the agent exited (status 4) before answering initialize [0]", ""},
		{"answers initialize then exits", "read line; echo '" + initReply + "'; read line; exit 3", "",
			"the agent exited (status 3) before answering session/new [1]; 1 recorded client message was not sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tt.script)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { // reaper: ends when the shell exits
				cmd.Wait()
				close(exited)
			}()
			peerExit := func() string {
				<-exited
				return fmt.Sprintf("exited (status %d)", cmd.ProcessState.ExitCode())
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			res, err := RunClient(ctx, demoConv("s1", "end_turn", "hi"), stdout, stdin,
				ClientOptions{Timeout: waitLimit, Settle: 100 * time.Millisecond, PeerExit: peerExit})
			var gone *GoneError
			switch {
			case tt.wantErr != "":
				if !errors.As(err, &gone) || !errors.Is(err, ErrPeerGone) || err.Error() != tt.wantErr {
					t.Fatalf("error %v; want a GoneError %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("error %v; want a note %q", err, tt.wantNote)
			case len(res.Notes) != 1 || res.Notes[0] != tt.wantNote || res.Match():
				t.Fatalf("notes %q; want [%q]", res.Notes, tt.wantNote)
			}
			if err != nil && strings.Contains(err.Error(), "pipe") {
				t.Errorf("the error speaks of pipes: %v", err)
			}
		})
	}
}
