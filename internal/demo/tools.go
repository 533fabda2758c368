package demo

import (
	"errors"
	"fmt"
	"strings"
)

// agentCopy is what the agent works on when the client cannot read files.
const agentCopy = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, world\")\n}\n"

// SessionTitle is the title the demo agent gives a session in its first
// turn (MutateTitle changes it).
const SessionTitle = "Fix the greeting in main.go"

// The permission options the agent offers for its edit.
var permissionOptions = []any{
	map[string]any{"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
	map[string]any{"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
	map[string]any{"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
}

func (t *turn) toolCall(id, title, kind string, extra map[string]any) error {
	u := map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": title, "kind": kind, "status": "pending"}
	for k, v := range extra {
		u[k] = v
	}
	return t.update(u)
}

func (t *turn) toolUpdate(id, status string, content ...any) error {
	u := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status}
	if len(content) > 0 {
		u["content"] = content
	}
	return t.update(u)
}

func textContent(text string) map[string]any {
	return map[string]any{"type": "content", "content": textBlock(text)}
}

// clientRefused tells a JSON-RPC error from the client (the tool fails,
// the turn goes on) from a broken connection (the turn ends).
func clientRefused(err error) (*RPCError, bool) {
	var re *RPCError
	return re, errors.As(err, &re)
}

func (t *turn) readFile() error {
	id, p := t.s.nextToolCallID(), t.filePath()
	loc := []any{map[string]any{"path": p}}
	if err := t.toolCall(id, "Read "+DemoFile, "read", map[string]any{"locations": loc, "rawInput": map[string]any{"path": p}}); err != nil {
		return err
	}
	if !t.caps.Fs.ReadTextFile {
		t.oldText = agentCopy
		return t.toolUpdate(id, "completed", textContent("The client offers no file reading; using the agent's own copy."))
	}
	if err := t.toolUpdate(id, "in_progress"); err != nil {
		return err
	}
	var res struct {
		Content *string `json:"content"`
	}
	err := t.a.c.call(t.a.ctx, "fs/read_text_file", map[string]any{"sessionId": t.s.id, "path": p}, &res)
	if re, ok := clientRefused(err); ok {
		t.oldText = agentCopy
		return t.toolUpdate(id, "failed", textContent("Could not read "+p+": "+re.Message))
	}
	if err != nil {
		return err
	}
	if res.Content == nil {
		return protocolErrorf("fs/read_text_file result has no content")
	}
	t.oldText = *res.Content
	return t.toolUpdate(id, "completed", textContent(t.oldText))
}

func (t *turn) editFile() error {
	id, p := t.s.nextToolCallID(), t.filePath()
	newText := editedText(t.oldText)
	diff := map[string]any{"type": "diff", "path": p, "oldText": t.oldText, "newText": newText}
	loc := []any{map[string]any{"path": p}}
	title := "Update the greeting in " + DemoFile
	if err := t.toolCall(id, title, "edit", map[string]any{"content": []any{diff}, "locations": loc}); err != nil {
		return err
	}
	choice, err := t.askPermission(id, title, diff, loc)
	if err != nil {
		return err
	}
	switch {
	case choice == "":
		_ = t.toolUpdate(id, "failed", textContent("Cancelled before the edit was made."))
		return errCancelled
	case strings.HasPrefix(choice, "reject"):
		t.rejected = true
		return t.toolUpdate(id, "failed", textContent("The edit was rejected; "+DemoFile+" is unchanged."))
	}
	if t.caps.Fs.WriteTextFile {
		err := t.a.c.call(t.a.ctx, "fs/write_text_file", map[string]any{"sessionId": t.s.id, "path": p, "content": newText}, nil)
		if re, ok := clientRefused(err); ok {
			return t.toolUpdate(id, "failed", textContent("Could not write "+p+": "+re.Message))
		}
		if err != nil {
			return err
		}
	}
	t.edited = true
	return t.toolUpdate(id, "completed", diff)
}

// askPermission returns the chosen option id, or "" when the client
// answered cancelled.
func (t *turn) askPermission(id, title string, diff map[string]any, loc []any) (string, error) {
	params := map[string]any{
		"sessionId": t.s.id,
		"toolCall": map[string]any{"toolCallId": id, "title": title, "kind": "edit", "status": "pending",
			"content": []any{diff}, "locations": loc},
		"options": permissionOptions,
	}
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if err := t.a.c.call(t.a.ctx, "session/request_permission", params, &res); err != nil {
		return "", err
	}
	switch o := res.Outcome; {
	case o.Outcome == "cancelled":
		return "", nil
	case o.Outcome == "selected" && knownOption(o.OptionID):
		return o.OptionID, nil
	default:
		return "", protocolErrorf("session/request_permission outcome %+v is neither cancelled nor an offered option", o)
	}
}

func knownOption(id string) bool {
	for _, o := range permissionOptions {
		if o.(map[string]any)["optionId"] == id {
			return true
		}
	}
	return false
}

// runTests runs a command in a client terminal, if the client has them:
// terminal/create, output, wait_for_exit, release.
func (t *turn) runTests() error {
	if !t.caps.Terminal {
		return nil
	}
	id := t.s.nextToolCallID()
	if err := t.toolCall(id, "Run go test ./...", "execute", map[string]any{"rawInput": map[string]any{"command": "go test ./..."}}); err != nil {
		return err
	}
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	err := t.a.c.call(t.a.ctx, "terminal/create", map[string]any{"sessionId": t.s.id, "command": "go",
		"args": []string{"test", "./..."}, "cwd": t.s.cwd, "outputByteLimit": 65536}, &created)
	if re, ok := clientRefused(err); ok {
		return t.toolUpdate(id, "failed", textContent("Could not start the tests: "+re.Message))
	}
	if err != nil {
		return err
	}
	if created.TerminalID == "" {
		return protocolErrorf("terminal/create result has no terminalId")
	}
	return t.followTerminal(id, created.TerminalID)
}

func (t *turn) followTerminal(id, term string) error {
	ref := map[string]any{"sessionId": t.s.id, "terminalId": term}
	defer func() { _ = t.a.c.call(t.a.ctx, "terminal/release", ref, nil) }()
	if err := t.toolUpdate(id, "in_progress", map[string]any{"type": "terminal", "terminalId": term}); err != nil {
		return err
	}
	var out struct {
		Output    string `json:"output"`
		Truncated bool   `json:"truncated"`
	}
	if err := t.a.c.call(t.a.ctx, "terminal/output", ref, &out); err != nil {
		return err
	}
	if t.ctx.Err() != nil {
		_ = t.a.c.call(t.a.ctx, "terminal/kill", ref, nil)
		return errCancelled
	}
	var exit struct {
		ExitCode *int    `json:"exitCode"`
		Signal   *string `json:"signal"`
	}
	if err := t.a.c.call(t.a.ctx, "terminal/wait_for_exit", ref, &exit); err != nil {
		return err
	}
	status := "completed"
	if exit.ExitCode == nil || *exit.ExitCode != 0 {
		status = "failed"
	}
	t.tested = status == "completed"
	return t.toolUpdate(id, status, map[string]any{"type": "terminal", "terminalId": term})
}

func (t *turn) title() error {
	if t.n != 1 {
		return nil
	}
	title := SessionTitle
	if t.a.opts.Mutate == MutateTitle {
		title = "Change the greeting in main.go"
	}
	return t.update(map[string]any{"sessionUpdate": "session_info_update", "title": title})
}

func (t *turn) usage() error {
	if t.a.opts.Mutate == MutateDrop {
		return nil
	}
	used := 1200 * t.n
	for _, b := range t.prompt {
		used += len(b) / 4
	}
	return t.update(map[string]any{"sessionUpdate": "usage_update", "used": used, "size": 200000})
}

func (t *turn) conclude() error {
	var msg string
	switch {
	case t.rejected:
		msg = DemoFile + " is unchanged, as you asked."
	case t.edited && t.tested:
		msg = "Done: " + DemoFile + " now greets ACP and the tests pass."
	case t.edited:
		msg = "Done: " + DemoFile + " now greets ACP."
	default:
		msg = "I could not finish the edit."
	}
	if err := t.say("agent_message_chunk", msg); err != nil {
		return err
	}
	if t.a.opts.Mutate == MutateExtra {
		return t.say("agent_message_chunk", fmt.Sprintf("(turn %d, mutated on purpose)", t.n))
	}
	return nil
}
