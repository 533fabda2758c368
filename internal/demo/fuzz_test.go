package demo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// fuzzSeeds are one real conversation's two streams plus odd inputs.
func fuzzSeeds(f *testing.F, pick func(result) []byte) {
	r := converse(&testing.T{}, AgentOptions{}, ClientOptions{Cancel: true, Load: true})
	f.Add(pick(r))
	for _, s := range []string{
		"", "\n", "[]\n", "[1,2]\n", "null\n", `{"jsonrpc":"2.0"}` + "\n", `{"jsonrpc":"2.0","id":0}` + "\n",
		`{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"text"}]}}`,
		"\xff\xfe\r\n{",
	} {
		f.Add([]byte(s))
	}
}

// FuzzAgentInput: whatever a client sends, the agent neither panics nor
// hangs, and ends cleanly or with ErrProtocol.
func FuzzAgentInput(f *testing.F) {
	fuzzSeeds(f, func(r result) []byte { return []byte(r.toAgent.String()) })
	f.Fuzz(func(t *testing.T, in []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit) // a hang fails with its error
		defer cancel()
		err := RunAgent(ctx, bytes.NewReader(in), io.Discard, AgentOptions{})
		if err != nil && !errors.Is(err, ErrProtocol) {
			t.Fatalf("RunAgent: %v", err)
		}
	})
}

// FuzzClientInput: whatever an agent sends, the client neither panics
// nor hangs.
func FuzzClientInput(f *testing.F) {
	fuzzSeeds(f, func(r result) []byte { return []byte(r.toClient.String()) })
	f.Fuzz(func(t *testing.T, in []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*waitLimit) // a backstop: the hang check fires first
		defer cancel()
		done := make(chan struct{})
		go func() { // the client under test; must end on its own
			defer close(done)
			_, _ = RunClient(ctx, bytes.NewReader(in), io.Discard, ClientOptions{Grace: 10 * time.Millisecond})
		}()
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Fatalf("RunClient did not end within %v", waitLimit)
		}
	})
}
