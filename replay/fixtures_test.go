package replay

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/demo"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

const gooseFixture = "../../shared/fixtures/acp-devtools-handshakes/goose-1.37.0.json"

// loadFixture imports an acp-devtools export and loads it for replay.
func loadFixture(t *testing.T, path string) []protocol.Msg {
	t.Helper()
	if matches, _ := filepath.Glob(path); len(matches) == 0 {
		t.Skipf("fixture %s is absent (it lives beside the repository, in ../shared/fixtures)", path)
	}
	dst := filepath.Join(t.TempDir(), "fixture.acpscope")
	if _, err := capture.Import(path, dst); err != nil {
		t.Fatal(err)
	}
	r, err := capture.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	msgs, err := Load(r, "")
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestReplayGooseAsAgentToDemoClient serves a real goose session to the
// demo client. The client's prompts are not goose's, so "works" means:
// initialize and session/new are answered from the recording (the client
// ends up in goose's session), the demo client's prompt is refused with
// a JSON-RPC error naming the nearest recorded prompt, and stderr shows
// the diff.
func TestReplayGooseAsAgentToDemoClient(t *testing.T) {
	rec := loadFixture(t, gooseFixture)
	res, sum, log, clientErr := serveToDemoClient(t, rec, demo.ClientOptions{Prompts: []string{"Hello there"}})
	if res.Served < 2 {
		t.Errorf("served %d requests, want initialize and session/new at least\n%s", res.Served, log)
	}
	if len(sum.Sessions) == 0 || sum.Sessions[0].ID != "20260612_3" {
		t.Errorf("demo client sessions %+v, want goose's 20260612_3\n%s", sum.Sessions, log)
	}
	if sum.ProtocolVersion != 1 || !sum.LoadSession {
		t.Errorf("demo client did not get goose's initialize answer: %+v", sum)
	}
	if res.Unmatched != 1 {
		t.Errorf("unmatched %d, want 1 (the demo prompt)\n%s", res.Unmatched, log)
	}
	for _, want := range []string{"no recorded session/prompt matches", "nearest is recorded #16", `prompt.0.text: "Hi Goose!" → "Hello there"`} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	if clientErr == nil || !strings.Contains(clientErr.Error(), "no recorded session/prompt matches") {
		t.Errorf("the demo client did not get the replay's error for its prompt: %v", clientErr)
	}
}

// TestReplayFixturesLoad checks that every fixture loads and folds (the
// replay plan) without losing messages, and that the store paired its
// responses as protocol.Pair does: Load takes their method and session
// from the records.
func TestReplayFixturesLoad(t *testing.T) {
	files, _ := filepath.Glob("../../shared/fixtures/acp-devtools-handshakes/*.json")
	if len(files) == 0 {
		t.Skip("no fixtures in ../shared/fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			msgs := loadFixture(t, f)
			n := 0
			for _, it := range Fold(msgs, false) {
				n += len(it.Msgs)
			}
			if n != len(msgs) {
				t.Errorf("folding kept %d of %d messages", n, len(msgs))
			}
			paired := append([]protocol.Msg(nil), msgs...)
			peer := protocol.Pair(paired)
			for i, m := range msgs {
				if !m.Kind.IsResponse() || peer[i] < 0 {
					continue
				}
				if m.Method == "" || m.Method != paired[i].Method || m.Session != paired[i].Session {
					t.Errorf("response #%d loaded as %q in %q, paired as %q in %q", m.Seq, m.Method, m.Session, paired[i].Method, paired[i].Session)
				}
			}
		})
	}
}

// TestReplayAsAgentRebindsTerminal serves a recording whose client minted
// terminal ids; a live client minting others must see its own ids in the
// agent's later messages.
func TestReplayAsAgentRebindsTerminal(t *testing.T) {
	rec := conv(
		`c {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`a {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-rec"}}`,
		`c {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-rec","prompt":[{"type":"text","text":"run"}]}}`,
		`a {"jsonrpc":"2.0","id":0,"method":"terminal/create","params":{"sessionId":"s-rec","command":"go","args":["test"]}}`,
		`c {"jsonrpc":"2.0","id":0,"result":{"terminalId":"term-rec"}}`,
		`a {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-rec","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"go test","content":[{"type":"terminal","terminalId":"term-rec"}]}}}`,
		`a {"jsonrpc":"2.0","id":1,"method":"terminal/output","params":{"sessionId":"s-rec","terminalId":"term-rec"}}`,
		`c {"jsonrpc":"2.0","id":1,"result":{"output":"ok","truncated":false}}`,
		`a {"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
	)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	done := make(chan *AgentResult, 1)
	go func() { // the replaying agent
		res, _ := RunAgent(ctx, rec, toAgentR, toClientW, AgentOptions{})
		toClientW.Close()
		done <- res
	}()
	client := newPeer(toClientR, toAgentW, wire.DirAgent, nil)
	expect := func(method string) protocol.Msg {
		t.Helper()
		select {
		case m := <-client.in:
			if m.Method != method && method != "" {
				t.Fatalf("got %s %s, want %s: %s", m.Kind, m.Method, method, m.Body)
			}
			return m
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", method)
		}
		return protocol.Msg{}
	}
	client.send([]byte(`{"jsonrpc":"2.0","id":"a","method":"session/new","params":{"cwd":"/elsewhere","mcpServers":[]}}`))
	if m := expect(""); string(m.ID) != `"a"` || !strings.Contains(string(m.Body), `"s-rec"`) {
		t.Fatalf("session/new answered %s", m.Body)
	}
	client.send([]byte(`{"jsonrpc":"2.0","id":"b","method":"session/prompt","params":{"sessionId":"s-rec","prompt":[{"type":"text","text":"run"}]}}`))
	create := expect("terminal/create")
	client.send(SetID([]byte(`{"jsonrpc":"2.0","id":0,"result":{"terminalId":"term-LIVE"}}`), create.ID))
	update := expect("session/update")
	output := expect("terminal/output")
	for _, m := range []protocol.Msg{update, output} {
		if strings.Contains(string(m.Body), "term-rec") || !strings.Contains(string(m.Body), "term-LIVE") {
			t.Errorf("terminal id not rebound: %s", m.Body)
		}
	}
	client.send(SetID([]byte(`{"jsonrpc":"2.0","id":0,"result":{"output":"ok","truncated":false}}`), output.ID))
	if m := expect(""); string(m.ID) != `"b"` || !strings.Contains(string(m.Body), "end_turn") {
		t.Errorf("prompt answered %s", m.Body)
	}
	toAgentW.Close()
	if res := <-done; res == nil || res.Served != 2 || res.Unmatched != 0 {
		t.Errorf("result %+v", res)
	}
}

func TestOnlySession(t *testing.T) {
	msgs := conv(
		`c {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`,
		`a {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`,
		`c {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/a","mcpServers":[]}}`,
		`a {"jsonrpc":"2.0","id":1,"result":{"sessionId":"A"}}`,
		`c {"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/b","mcpServers":[]}}`,
		`a {"jsonrpc":"2.0","id":2,"result":{"sessionId":"B"}}`,
		`c {"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"B","prompt":[]}}`,
		`a {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`,
	)
	got := OnlySession(msgs, "B")
	var seqs []uint64
	for _, m := range got {
		seqs = append(seqs, m.Seq)
	}
	if peer := protocol.Pair(got); len(seqs) != 6 || seqs[2] != 5 || got[5].Method != "session/prompt" || peer[5] != 4 {
		t.Errorf("session B kept seqs %v (want 1 2 5 6 7 8, paired)", seqs)
	}
}

func TestReplayAsAgentSpeed(t *testing.T) {
	rec := conv(
		`c {"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
		chunk("s", "a"),
		chunk("s", "b"),
		`a {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`,
	)
	// Each case stretches conv's gaps so that a replay paced wrong either
	// ends too soon (the minimum, which load cannot shorten) or would
	// take far beyond waitLimit (half an hour or more), which fails.
	for _, tt := range []struct {
		speed    float64
		gap, min time.Duration
	}{{1, 300 * time.Millisecond, 850 * time.Millisecond}, {600, 10 * time.Minute, 2900 * time.Millisecond}, {0, 10 * time.Minute, 0}} {
		rec := slices.Clone(rec)
		for i := range rec {
			rec[i].Time = int64(i) * int64(tt.gap)
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		toAgentR, toAgentW := io.Pipe()
		toClientR, toClientW := io.Pipe()
		go func() { // the replaying agent
			RunAgent(ctx, rec, toAgentR, toClientW, AgentOptions{Speed: tt.speed})
			toClientW.Close()
		}()
		client := newPeer(toClientR, toAgentW, wire.DirAgent, nil)
		start := time.Now()
		client.send([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`))
		for n := 0; n < 3; n++ {
			recv(t, client)
		}
		if took := time.Since(start); took < tt.min {
			t.Errorf("speed %v: the turn took %v, want at least %v", tt.speed, took, tt.min)
		}
		toAgentW.Close()
		cancel()
	}
}

// TestReplayAsAgentFollowsClientSessionID: a client that loads a session
// under its own id gets the recorded replay under that id.
func TestReplayAsAgentFollowsClientSessionID(t *testing.T) {
	rec := conv(
		`c {"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"rec-sess","cwd":"/w","mcpServers":[]}}`,
		`a {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"rec-sess","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"old"}}}}`,
		`a {"jsonrpc":"2.0","id":1,"result":{}}`,
	)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	go func() { // the replaying agent
		RunAgent(ctx, rec, toAgentR, toClientW, AgentOptions{})
		toClientW.Close()
	}()
	client := newPeer(toClientR, toAgentW, wire.DirAgent, nil)
	client.send([]byte(`{"jsonrpc":"2.0","id":7,"method":"session/load","params":{"sessionId":"mine","cwd":"/w","mcpServers":[]}}`))
	update, resp := <-client.in, <-client.in
	if update.Session != "mine" || string(resp.ID) != "7" {
		t.Errorf("replayed %s then %s", update.Body, resp.Body)
	}
	toAgentW.Close()
}

// TestReplayAsAgentCancelNeverSent: the recording has a session/cancel the
// live client never sends; the turn must still end.
func TestReplayAsAgentCancelNeverSent(t *testing.T) {
	rec := conv(
		`c {"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`,
		chunk("s", "working"),
		`c {"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		`a {"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}`,
	)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	done := make(chan *AgentResult, 1)
	go func() { // the replaying agent
		res, _ := RunAgent(ctx, rec, toAgentR, toClientW, AgentOptions{Speed: 0})
		toClientW.Close()
		done <- res
	}()
	client := newPeer(toClientR, toAgentW, wire.DirAgent, nil)
	client.send([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`))
	recv(t, client)
	if resp := recv(t, client); !strings.Contains(string(resp.Body), "cancelled") {
		t.Errorf("got %s", resp.Body)
	}
	toAgentW.Close()
	if res := <-done; res.Skipped != 1 {
		t.Errorf("skipped %d, want the cancel", res.Skipped)
	}
}
