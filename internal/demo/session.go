package demo

import (
	"context"
	"strconv"
	"sync"
)

// session is the agent's state for one ACP session: the conversation so
// far (replayed by session/load) and the running turn, if any.
type session struct {
	id, cwd string

	mu        sync.Mutex
	history   []map[string]any // the update objects sent, user chunks included
	turns     int              // prompts started
	toolCalls int              // tool call ids minted
	cancel    context.CancelFunc
}

func newSession(id, cwd string) *session { return &session{id: id, cwd: cwd} }

// seedHistory gives a session the agent has never seen a short past, so
// that session/load has something to replay.
func (s *session) seedHistory() {
	s.record(chunk("user_message_chunk", "", "Hello from an earlier run."))
	s.record(chunk("agent_message_chunk", "msg_0", "This session was restored by the demo agent."))
}

func (s *session) record(update map[string]any) {
	s.mu.Lock()
	s.history = append(s.history, update)
	s.mu.Unlock()
}

func (s *session) historyCopy() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.history...)
}

// beginTurn registers a running turn and returns its number and context,
// or false when a turn is already running (one prompt at a time).
func (s *session) beginTurn(parent context.Context) (int, context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return 0, nil, false
	}
	ctx, cancel := context.WithCancel(parent)
	s.cancel = cancel
	s.turns++
	return s.turns, ctx, true
}

func (s *session) endTurn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
}

func (s *session) cancelTurn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
}

func (s *session) nextToolCallID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.toolCalls++
	return "call_" + strconv.Itoa(s.toolCalls)
}

// chunk builds a message or thought chunk update with a text block.
func chunk(kind, messageID, text string) map[string]any {
	u := map[string]any{"sessionUpdate": kind, "content": textBlock(text)}
	if messageID != "" {
		u["messageId"] = messageID
	}
	return u
}

func textBlock(text string) map[string]any { return map[string]any{"type": "text", "text": text} }
