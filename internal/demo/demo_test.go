package demo

import (
	"context"
	"errors"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/internal/testkit"
)

// result is one agent/client conversation over real io.Pipes.
type result struct {
	sum       Summary
	clientErr error
	agentErr  error
	toClient  *testkit.Buffer // every byte the agent wrote
	toAgent   *testkit.Buffer // every byte the client wrote
}

// waitLimit bounds every wait for a conversation, a process or a
// goroutine: generous, since the machines the tests run on are shared and
// busy; a passing wait returns as soon as its condition holds.
const waitLimit = 2 * time.Minute

func converse(t *testing.T, ao AgentOptions, co ClientOptions) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	res := result{toClient: &testkit.Buffer{}, toAgent: &testkit.Buffer{}}
	agentDone := make(chan error, 1)
	go func() { // the agent; ends when the client closes c2aW
		err := RunAgent(ctx, c2aR, io.MultiWriter(a2cW, res.toClient), ao)
		_ = a2cW.Close()
		agentDone <- err
	}()
	res.sum, res.clientErr = RunClient(ctx, a2cR, teeCloser{c2aW, res.toAgent}, co)
	res.agentErr = <-agentDone
	return res
}

// teeCloser records what is written and passes Close on.
type teeCloser struct {
	w   io.WriteCloser
	rec io.Writer
}

func (t teeCloser) Write(p []byte) (int, error) {
	_, _ = t.rec.Write(p)
	return t.w.Write(p)
}
func (t teeCloser) Close() error { return t.w.Close() }

var fullTurn = []string{
	"fs/read_text_file", "session/request_permission", "fs/write_text_file",
	"terminal/create", "terminal/output", "terminal/wait_for_exit", "terminal/release",
}

var fullUpdates = []string{
	"plan", "agent_thought_chunk", "agent_thought_chunk", "agent_thought_chunk",
	"agent_message_chunk", "agent_message_chunk", "agent_message_chunk",
	"tool_call", "tool_call_update", "tool_call_update", // read: in_progress, completed
	"tool_call", "tool_call_update", // edit: completed
	"tool_call", "tool_call_update", "tool_call_update", // execute: in_progress, completed
	"plan", "session_info_update", "usage_update", "agent_message_chunk",
}

func TestConversation(t *testing.T) {
	before := runtime.NumGoroutine()
	tests := []struct {
		name     string
		ao       AgentOptions
		co       ClientOptions
		sessions int
		requests []string // agent requests in the first turn
		updates  []string // updates in the first turn
		file     string   // main.go at the end
		replayed int
	}{
		{name: "default", requests: fullTurn, updates: fullUpdates, sessions: 1,
			file: strings.Replace(agentCopy, "hello, world", "hello, ACP", 1) + "// Reviewed by the demo agent.\n"},
		{name: "minimal client", co: ClientOptions{Minimal: true}, requests: []string{"session/request_permission"}, sessions: 1,
			updates: []string{"plan", "agent_thought_chunk", "agent_thought_chunk", "agent_thought_chunk",
				"agent_message_chunk", "agent_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update",
				"tool_call", "tool_call_update", "plan", "session_info_update", "usage_update", "agent_message_chunk"},
			file: agentCopy},
		{name: "two sessions and load", co: ClientOptions{Sessions: 2, Load: true, MCPSecret: true}, requests: fullTurn,
			updates: fullUpdates, sessions: 2, replayed: 3 + 2*len(fullUpdates) - 1,
			file: strings.Replace(agentCopy, "hello, world", "hello, ACP", 1) + "// Reviewed by the demo agent.\n// Reviewed by the demo agent.\n// Reviewed by the demo agent.\n"},
		{name: "delayed chunks", ao: AgentOptions{Delay: time.Millisecond}, requests: fullTurn, updates: fullUpdates, sessions: 1,
			file: strings.Replace(agentCopy, "hello, world", "hello, ACP", 1) + "// Reviewed by the demo agent.\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := converse(t, tc.ao, tc.co)
			if r.clientErr != nil || r.agentErr != nil {
				t.Fatalf("client error %v, agent error %v", r.clientErr, r.agentErr)
			}
			s := r.sum
			if s.AgentName != AgentName || s.ProtocolVersion != 1 || !s.LoadSession {
				t.Errorf("agent info = %q v%d load=%t", s.AgentName, s.ProtocolVersion, s.LoadSession)
			}
			if len(s.Sessions) != tc.sessions {
				t.Fatalf("sessions = %d, want %d", len(s.Sessions), tc.sessions)
			}
			for i, ss := range s.Sessions {
				if want := "sess_" + string(rune('1'+i)); ss.ID != want {
					t.Errorf("session %d id = %q, want %q", i, ss.ID, want)
				}
				if ss.Title != SessionTitle {
					t.Errorf("title = %q, want %q", ss.Title, SessionTitle)
				}
				if len(ss.Turns) != len(DefaultPrompts) {
					t.Fatalf("turns = %d, want %d", len(ss.Turns), len(DefaultPrompts))
				}
				first := ss.Turns[0]
				if first.StopReason != StopEndTurn || ss.Turns[1].StopReason != StopEndTurn {
					t.Errorf("stop reasons = %q, %q", first.StopReason, ss.Turns[1].StopReason)
				}
				if !slices.Equal(first.AgentRequests, tc.requests) {
					t.Errorf("agent requests = %q, want %q", first.AgentRequests, tc.requests)
				}
				if !slices.Equal(first.Updates, tc.updates) {
					t.Errorf("updates = %q, want %q", first.Updates, tc.updates)
				}
				if !strings.HasPrefix(first.Message, "I'll start by reading main.go to see what it prints.") {
					t.Errorf("message = %q", first.Message)
				}
				if !strings.HasPrefix(ss.Turns[1].Message, "Looking at main.go as you asked.") {
					t.Errorf("second message = %q (the resource_link was not seen)", ss.Turns[1].Message)
				}
				for _, tool := range first.ToolCalls {
					if tool.Status != "completed" {
						t.Errorf("tool call %+v did not complete", tool)
					}
				}
			}
			if got := len(s.Sessions[0].Replayed); got != tc.replayed {
				t.Errorf("session/load replayed %d updates, want %d", got, tc.replayed)
			}
			if got := s.Files[DefaultCwd+"/main.go"]; got != tc.file {
				t.Errorf("main.go at the end:\n%s\nwant:\n%s", got, tc.file)
			}
			hasSecret := strings.Contains(r.toAgent.String(), SecretValue)
			if hasSecret != tc.co.MCPSecret {
				t.Errorf("secret on the wire = %t, want %t", hasSecret, tc.co.MCPSecret)
			}
		})
	}
	waitGoroutines(t, before)
}

// waitGoroutines fails when goroutines started by the tests outlive them.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines leaked: %d > %d after %v\n%s", runtime.NumGoroutine(), before, waitLimit, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name    string
		prompts []string
		turn    int // the cancelled turn
	}{
		{name: "second of two prompts", turn: 1},
		{name: "only prompt", prompts: []string{"just one"}, turn: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := converse(t, AgentOptions{}, ClientOptions{Cancel: true, Prompts: tc.prompts})
			if r.clientErr != nil || r.agentErr != nil {
				t.Fatalf("client error %v, agent error %v", r.clientErr, r.agentErr)
			}
			turns := r.sum.Sessions[0].Turns
			got := turns[tc.turn]
			if got.StopReason != StopCancelled || !got.Cancelled || got.Permission != "cancelled" {
				t.Errorf("cancelled turn = %+v", got)
			}
			if want := []string{"fs/read_text_file", "session/request_permission"}; !slices.Equal(got.AgentRequests, want) {
				t.Errorf("agent requests = %q, want %q (nothing after the cancel)", got.AgentRequests, want)
			}
			if last := got.ToolCalls[len(got.ToolCalls)-1]; last.Kind != "edit" || last.Status != "failed" {
				t.Errorf("edit tool call = %+v, want failed", last)
			}
			for i, turn := range turns {
				if i != tc.turn && turn.StopReason != StopEndTurn {
					t.Errorf("turn %d stop reason = %q", i, turn.StopReason)
				}
			}
			// On the wire: session/cancel goes out before the permission answer.
			wire := r.toAgent.String()
			cancelAt := strings.Index(wire, `"method":"session/cancel"`)
			answerAt := strings.Index(wire, `"outcome":"cancelled"`)
			if cancelAt < 0 || answerAt < cancelAt {
				t.Errorf("session/cancel at %d, cancelled outcome at %d in:\n%s", cancelAt, answerAt, wire)
			}
		})
	}
}

// lineDiff returns the lines only in a and only in b, in order (the
// streams are deterministic, so a simple multiset difference is enough).
func lineDiff(a, b []string) (onlyA, onlyB []string) {
	count := map[string]int{}
	for _, l := range b {
		count[l]++
	}
	for _, l := range a {
		if count[l] > 0 {
			count[l]--
		} else {
			onlyA = append(onlyA, l)
		}
	}
	count = map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		if count[l] > 0 {
			count[l]--
		} else {
			onlyB = append(onlyB, l)
		}
	}
	return onlyA, onlyB
}

func TestMutate(t *testing.T) {
	base := converse(t, AgentOptions{}, ClientOptions{})
	again := converse(t, AgentOptions{}, ClientOptions{})
	if a, b := base.toClient.String(), again.toClient.String(); a != b {
		t.Fatalf("two unmutated runs differ; the demo agent must be deterministic:\n%s\n---\n%s", a, b)
	}
	tests := []struct {
		mutate           string
		removed, added   int
		removedHas, adds string // a substring every changed line has
	}{
		{mutate: MutateTitle, removed: 2, added: 2, adds: "",
			removedHas: "", // one chunk and one title
		},
		{mutate: MutateExtra, added: 2, adds: "mutated on purpose"},
		{mutate: MutateDrop, removed: 2, removedHas: "usage_update"},
	}
	for _, tc := range tests {
		t.Run(tc.mutate, func(t *testing.T) {
			r := converse(t, AgentOptions{Mutate: tc.mutate}, ClientOptions{})
			if r.clientErr != nil || r.agentErr != nil {
				t.Fatalf("client error %v, agent error %v", r.clientErr, r.agentErr)
			}
			removed, added := lineDiff(base.toClient.Lines(), r.toClient.Lines())
			if len(removed) != tc.removed || len(added) != tc.added {
				t.Fatalf("removed %d, added %d lines; want %d, %d\nremoved: %q\nadded: %q",
					len(removed), len(added), tc.removed, tc.added, removed, added)
			}
			for _, l := range removed {
				if !strings.Contains(l, tc.removedHas) {
					t.Errorf("removed line %q lacks %q", l, tc.removedHas)
				}
			}
			for _, l := range added {
				if !strings.Contains(l, tc.adds) {
					t.Errorf("added line %q lacks %q", l, tc.adds)
				}
			}
			if tc.mutate == MutateTitle {
				if got := r.sum.Sessions[0].Title; got == SessionTitle {
					t.Errorf("title not mutated: %q", got)
				}
				if !strings.Contains(strings.Join(added, ""), "skimming") {
					t.Errorf("message chunk not mutated: %q", added)
				}
			}
		})
	}
	if err := RunAgent(context.Background(), strings.NewReader(""), io.Discard, AgentOptions{Mutate: "nonsense"}); !errors.Is(err, ErrOption) {
		t.Errorf("unknown mutation: err = %v, want ErrOption", err)
	}
}

func TestSessionScheme(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	tests := []struct {
		scheme string
		match  func(string) bool
	}{
		{SchemeCounter, func(id string) bool { return id == "sess_1" || id == "sess_2" }},
		{"", func(id string) bool { return id == "sess_1" || id == "sess_2" }},
		{SchemeUUID, uuid.MatchString},
	}
	for _, tc := range tests {
		t.Run("scheme="+tc.scheme, func(t *testing.T) {
			r := converse(t, AgentOptions{SessionScheme: tc.scheme}, ClientOptions{Sessions: 2, Prompts: []string{"hi"}})
			if r.clientErr != nil || r.agentErr != nil {
				t.Fatalf("client error %v, agent error %v", r.clientErr, r.agentErr)
			}
			ids := []string{r.sum.Sessions[0].ID, r.sum.Sessions[1].ID}
			for _, id := range ids {
				if !tc.match(id) {
					t.Errorf("session id %q does not fit scheme %q", id, tc.scheme)
				}
			}
			if ids[0] == ids[1] {
				t.Errorf("two sessions share id %q", ids[0])
			}
		})
	}
	if err := RunAgent(context.Background(), strings.NewReader(""), io.Discard, AgentOptions{SessionScheme: "x"}); !errors.Is(err, ErrOption) {
		t.Errorf("unknown scheme: err = %v, want ErrOption", err)
	}
}
