package replay

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/protocol"
)

// TestReplayAsAgentClientLeavesEarly: a client that leaves part way never
// sent the recorded client messages after that point, and the result says
// how many. (A client gone after initialize was reported as "0 recorded
// client messages never came".)
func TestReplayAsAgentClientLeavesEarly(t *testing.T) {
	requests := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`,
	}
	for sent := 0; sent <= len(requests); sent++ {
		t.Run(fmt.Sprintf("after %d requests", sent), func(t *testing.T) {
			toAgentR, toAgentW := pipe(t)
			toClientR, toClientW := pipe(t)
			var log strings.Builder
			done := make(chan *AgentResult, 1)
			go func() { // the replaying agent: ends when the client closes its output
				res, err := RunAgent(context.Background(), demoConv("s1", "end_turn", "hi"), toAgentR, toClientW, AgentOptions{Log: &log})
				if err != nil {
					t.Errorf("RunAgent: %v", err)
				}
				toClientW.Close()
				done <- res
			}()
			answers := bufio.NewReader(toClientR)
			for id, req := range requests[:sent] {
				if _, err := toAgentW.WriteString(req + "\n"); err != nil {
					t.Fatal(err)
				}
				waitForAnswer(t, answers, id)
			}
			toAgentW.Close()
			var res *AgentResult
			select {
			case res = <-done:
			case <-time.After(waitLimit):
				t.Fatalf("the replay did not end within %v of the client leaving", waitLimit)
			}
			if want := len(requests) - sent; res.Skipped != want || res.Served != sent {
				t.Errorf("served %d, skipped %d; want %d and %d\n%s", res.Served, res.Skipped, sent, want, log.String())
			}
		})
	}
}

// waitForAnswer reads the replay's lines until the response to id.
func waitForAnswer(t *testing.T, r *bufio.Reader, id int) {
	t.Helper()
	want := fmt.Sprintf(`"id":%d,"result"`, id)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("waiting for the answer to request %d: %v", id, err)
		}
		if strings.Contains(line, want) {
			return
		}
	}
}

// waitLimit bounds every wait for the replay or a peer: generous, since
// the machines the tests run on are shared and busy; a passing wait
// returns as soon as its condition holds.
const waitLimit = 2 * time.Minute

// recv waits for the next message from a peer.
func recv(t *testing.T, p *peer) protocol.Msg {
	t.Helper()
	select {
	case m, ok := <-p.in:
		if !ok {
			t.Fatal("the replay closed its output")
		}
		return m
	case <-time.After(waitLimit):
		t.Fatalf("no message from the replay within %v", waitLimit)
	}
	return protocol.Msg{}
}

func pipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}
