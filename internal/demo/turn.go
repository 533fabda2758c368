package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// errCancelled ends a turn early because the client cancelled it.
var errCancelled = errors.New("turn cancelled")

// Stop reasons the demo agent answers session/prompt with.
const (
	StopEndTurn   = "end_turn"
	StopCancelled = "cancelled"
)

// DemoFile is the workspace file the demo agent reads and edits,
// relative to the session's cwd.
const DemoFile = "main.go"

// turn is one session/prompt being answered: a scripted but complete
// agent turn (plan, thoughts, message, tool calls with fs, permission and
// terminal requests, title, usage).
type turn struct {
	a      *agent
	s      *session
	ctx    context.Context
	n      int
	caps   clientCaps
	prompt []json.RawMessage
	msgs   int // message ids minted in this turn

	oldText  string // what readFile found
	edited   bool   // the edit was allowed and written
	rejected bool
	tested   bool
}

func (a *agent) prompt(params json.RawMessage) (any, error) {
	var p struct {
		SessionID string            `json:"sessionId"`
		Prompt    []json.RawMessage `json:"prompt"`
	}
	if err := decodeParams("session/prompt", params, &p); err != nil {
		return nil, err
	}
	s := a.session(p.SessionID)
	if s == nil {
		return nil, rpcErrorf(CodeInvalidParams, "session/prompt: unknown session %q", p.SessionID)
	}
	if len(p.Prompt) == 0 {
		return nil, rpcErrorf(CodeInvalidParams, "session/prompt: prompt is empty")
	}
	n, ctx, ok := s.beginTurn(a.ctx)
	if !ok {
		return nil, rpcErrorf(CodeInvalidRequest, "session/prompt: session %s is already running a prompt", s.id)
	}
	defer s.endTurn()
	t := &turn{a: a, s: s, ctx: ctx, n: n, caps: a.clientCaps(), prompt: p.Prompt}
	a.logf("session %s: turn %d started", s.id, n)
	stop, err := t.run()
	if err != nil {
		return nil, err
	}
	a.logf("session %s: turn %d ended: %s", s.id, n, stop)
	return map[string]any{"stopReason": stop}, nil
}

// run plays the script. Cancellation is checked between steps; a cancelled
// turn still answers, with stopReason cancelled, as ACP requires.
func (t *turn) run() (string, error) {
	t.recordPrompt()
	steps := []func() error{
		t.planStart, t.think, t.intro, t.readFile, t.editFile, t.runTests,
		t.planDone, t.title, t.usage, t.conclude,
	}
	for _, step := range steps {
		if t.ctx.Err() != nil {
			return StopCancelled, nil
		}
		if err := step(); err != nil {
			if errors.Is(err, errCancelled) || t.ctx.Err() != nil {
				return StopCancelled, nil
			}
			return "", err
		}
	}
	return StopEndTurn, nil
}

// recordPrompt keeps the user's blocks as user_message_chunks so that
// session/load replays both sides of the conversation.
func (t *turn) recordPrompt() {
	for _, b := range t.prompt {
		var block any
		_ = json.Unmarshal(b, &block)
		t.s.record(map[string]any{"sessionUpdate": "user_message_chunk", "content": block})
	}
}

// update sends one session/update, records it, and paces the stream.
func (t *turn) update(u map[string]any) error {
	if err := t.a.c.notify("session/update", map[string]any{"sessionId": t.s.id, "update": u}); err != nil {
		return err
	}
	t.s.record(u)
	return t.pause()
}

func (t *turn) pause() error {
	if t.a.opts.Delay <= 0 {
		return nil
	}
	timer := time.NewTimer(t.a.opts.Delay)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
		return errCancelled
	case <-timer.C:
		return nil
	}
}

// say streams a message as chunks sharing one messageId.
func (t *turn) say(kind string, parts ...string) error {
	id := ""
	if kind == "agent_message_chunk" {
		t.msgs++
		id = fmt.Sprintf("msg_%d_%d", t.n, t.msgs)
	}
	for _, p := range parts {
		if err := t.update(chunk(kind, id, p)); err != nil {
			return err
		}
	}
	return nil
}

func (t *turn) plan(statuses ...string) error {
	names := []string{"Read " + DemoFile, "Update the greeting", "Run the tests"}
	prios := []string{"high", "high", "medium"}
	entries := make([]any, len(names))
	for i := range names {
		entries[i] = map[string]any{"content": names[i], "priority": prios[i], "status": statuses[i]}
	}
	return t.update(map[string]any{"sessionUpdate": "plan", "entries": entries})
}

func (t *turn) planStart() error { return t.plan("in_progress", "pending", "pending") }

func (t *turn) planDone() error {
	return t.plan("completed", "completed", "completed")
}

func (t *turn) think() error {
	return t.say("agent_thought_chunk", "The user wants the greeting changed. ",
		"I should read "+DemoFile+" first, ", "then edit it and run the tests.")
}

func (t *turn) intro() error {
	if name := t.linkedResource(); name != "" {
		return t.say("agent_message_chunk", "Looking at ", name, " as you asked.")
	}
	second := "by reading " + DemoFile + " "
	if t.n == 1 && t.a.opts.Mutate == MutateTitle {
		second = "by skimming " + DemoFile + " "
	}
	return t.say("agent_message_chunk", "I'll start ", second, "to see what it prints.")
}

// linkedResource returns the name of the first resource_link in the prompt.
func (t *turn) linkedResource() string {
	for _, b := range t.prompt {
		var block struct{ Type, Name, URI string }
		if json.Unmarshal(b, &block) == nil && block.Type == "resource_link" {
			if block.Name != "" {
				return block.Name
			}
			return path.Base(block.URI)
		}
	}
	return ""
}

func (t *turn) filePath() string { return path.Join(t.s.cwd, DemoFile) }

// editedText returns what the demo edit makes of a file's text.
func editedText(old string) string {
	if strings.Contains(old, "hello, world") {
		return strings.Replace(old, "hello, world", "hello, ACP", 1)
	}
	return old + "// Reviewed by the demo agent.\n"
}
