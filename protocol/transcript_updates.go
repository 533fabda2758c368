package protocol

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// How each kind of session/update and client call lands in a transcript.

func (b *builder) update(u unit, s *Session, upd map[string]any, raw []byte) {
	kind := str(upd, "sessionUpdate")
	switch kind {
	case "user_message_chunk":
		b.chunk(u, s, ItemUser, upd)
	case "agent_message_chunk":
		b.chunk(u, s, ItemAgent, upd)
	case "agent_thought_chunk":
		b.chunk(u, s, ItemThought, upd)
	case "user_message":
		b.message(u, s, ItemUser, upd)
	case "agent_message":
		b.message(u, s, ItemAgent, upd)
	case "agent_thought":
		b.message(u, s, ItemThought, upd)
	case "tool_call", "tool_call_update":
		b.tool(u, s, upd)
	case "tool_call_content_chunk":
		it := b.tool(u, s, map[string]any{"toolCallId": upd["toolCallId"]})
		if c, ok := upd["content"].(map[string]any); ok {
			it.Tool.Content = append(it.Tool.Content, toolContent([]any{c})...)
		}
	case "plan":
		plan := &Plan{Seq: u.Seq}
		for _, e := range arr(upd, "entries") {
			em, _ := e.(map[string]any)
			plan.Entries = append(plan.Entries, PlanEntry{Content: str(em, "content"), Priority: str(em, "priority"), Status: str(em, "status")})
		}
		s.Plan, s.Plans = plan, append(s.Plans, plan)
		s.add(&Item{Kind: ItemPlan, Seqs: []uint64{u.Seq}, Plan: plan})
	case "state_update":
		b.stateUpdate(u, s, upd, raw)
	default:
		it := &Item{Kind: ItemInfo, Seqs: []uint64{u.Seq}, Update: kind, Raw: json.RawMessage(raw)}
		if _, known := LookupUpdate(kind); !known {
			it.Kind = ItemUnknown
		}
		it.Summary = infoSummary(s, kind, upd)
		s.add(it)
	}
}

// chunk joins a message chunk to the previous item when it continues the
// same message: same kind, same messageId, no other content in between.
func (b *builder) chunk(u unit, s *Session, kind ItemKind, upd map[string]any) {
	text := blockOf(obj(upd, "content")).Summary()
	msgID := str(upd, "messageId")
	if kind == ItemUser && s.loading != nil && answered(s.loading) {
		// A replayed user message after the agent's reply opens the next
		// replayed turn.
		s.loading = &Turn{Index: s.nextIndex(), Replayed: true}
		s.Turns = append(s.Turns, s.loading)
	}
	t := s.current()
	// Info updates (usage, title, config…) arrive mid-message; they do not
	// end it. Anything else (a tool call, a thought) does.
	for i := len(t.Items) - 1; i >= 0; i-- {
		last := t.Items[i]
		if last.Kind == ItemInfo {
			continue
		}
		if last.Kind == kind && last.MessageID == msgID {
			last.Text += text
			last.Seqs = append(last.Seqs, u.Seq)
			return
		}
		break
	}
	s.add(&Item{Kind: kind, Seqs: []uint64{u.Seq}, MessageID: msgID, Text: text})
}

// answered reports whether a turn holds anything beyond user messages and
// info updates: the agent has replied in it.
func answered(t *Turn) bool {
	for _, it := range t.Items {
		if it.Kind != ItemUser && it.Kind != ItemInfo {
			return true
		}
	}
	return false
}

func (b *builder) tool(u unit, s *Session, upd map[string]any) *Item {
	id := str(upd, "toolCallId")
	it, ok := s.tools[id]
	if !ok {
		it = s.add(&Item{Kind: ItemTool, Tool: &ToolCall{ID: id}})
		s.tools[id] = it
	}
	it.Seqs = append(it.Seqs, u.Seq)
	mergeTool(it.Tool, upd)
	return it
}

// message handles the v2 draft's whole messages (content is an array of
// blocks); one with the messageId of the chunks before it replaces their
// text.
func (b *builder) message(u unit, s *Session, kind ItemKind, upd map[string]any) {
	var parts []string
	for _, blk := range blocks(arr(upd, "content")) {
		parts = append(parts, blk.Summary())
	}
	text, msgID := strings.Join(parts, ""), str(upd, "messageId")
	t := s.current()
	for i := len(t.Items) - 1; i >= 0; i-- {
		last := t.Items[i]
		if last.Kind == ItemInfo {
			continue
		}
		if last.Kind == kind && last.MessageID == msgID && msgID != "" {
			last.Text = text
			last.Seqs = append(last.Seqs, u.Seq)
			return
		}
		break
	}
	s.add(&Item{Kind: kind, Seqs: []uint64{u.Seq}, MessageID: msgID, Text: text})
}

// mergeTool applies the fields present in a tool_call or
// tool_call_update; content and locations replace the earlier lists.
func mergeTool(tc *ToolCall, upd map[string]any) {
	if v, ok := upd["title"].(string); ok {
		tc.Title = v
	}
	if v, ok := upd["kind"].(string); ok {
		tc.Kind = v
	}
	if v, ok := upd["status"].(string); ok {
		tc.Status = v
		if n := len(tc.Statuses); n == 0 || tc.Statuses[n-1] != v {
			tc.Statuses = append(tc.Statuses, v)
		}
	}
	if c, ok := upd["content"].([]any); ok {
		tc.Content = toolContent(c)
	}
	if l, ok := upd["locations"].([]any); ok {
		tc.Locations = tc.Locations[:0]
		for _, e := range l {
			em, _ := e.(map[string]any)
			loc := Location{Path: str(em, "path")}
			if n, ok := em["line"].(json.Number); ok {
				line, _ := n.Int64()
				loc.Line = int(line)
			}
			tc.Locations = append(tc.Locations, loc)
		}
	}
	if v, ok := upd["rawInput"]; ok {
		tc.RawInput = rawOf(v)
	}
	if v, ok := upd["rawOutput"]; ok {
		tc.RawOutput = rawOf(v)
	}
}

func toolContent(list []any) []ToolContent {
	var out []ToolContent
	for _, e := range list {
		em, _ := e.(map[string]any)
		c := ToolContent{Type: str(em, "type")}
		switch c.Type {
		case "content":
			blk := blockOf(obj(em, "content"))
			c.Block = &blk
		case "diff":
			c.Path, c.NewText = str(em, "path"), str(em, "newText")
			c.OldText, c.HasOld = em["oldText"].(string)
		case "terminal":
			c.TerminalID = str(em, "terminalId")
		}
		out = append(out, c)
	}
	return out
}

func rawOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func blocks(list []any) []Block {
	var out []Block
	for _, e := range list {
		em, _ := e.(map[string]any)
		out = append(out, blockOf(em))
	}
	return out
}

func blockOf(m map[string]any) Block {
	b := Block{Type: str(m, "type"), Text: str(m, "text"), MimeType: str(m, "mimeType"), URI: str(m, "uri"), Name: str(m, "name")}
	b.Size = len(str(m, "data"))
	if r := obj(m, "resource"); r != nil {
		b.URI, b.Text, b.MimeType = str(r, "uri"), str(r, "text"), str(r, "mimeType")
		b.Size = len(str(r, "blob"))
	}
	return b
}

func permission(p map[string]any) *Permission {
	tc := obj(p, "toolCall")
	perm := &Permission{ToolCallID: str(tc, "toolCallId"), Title: str(tc, "title")}
	for _, o := range arr(p, "options") {
		om, _ := o.(map[string]any)
		perm.Options = append(perm.Options, PermissionOption{ID: str(om, "optionId"), Name: str(om, "name"), Kind: str(om, "kind")})
	}
	return perm
}

func callSummary(method string, p map[string]any) string {
	switch method {
	case "terminal/create":
		cmd := str(p, "command")
		for _, a := range arr(p, "args") {
			if s, ok := a.(string); ok {
				cmd += " " + s
			}
		}
		return cmd
	case "elicitation/create":
		return str(p, "message")
	}
	if path := str(p, "path"); path != "" {
		return path
	}
	return str(p, "terminalId")
}

func resultSummary(method string, res map[string]any, raw []byte) string {
	switch method {
	case "fs/read_text_file":
		return fmt.Sprintf("%d bytes of JSON text", max(len(wire.Value(raw, "content"))-2, 0))
	case "terminal/create":
		return "terminal " + str(res, "terminalId")
	case "terminal/output":
		return fmt.Sprintf("%d bytes of JSON output", max(len(wire.Value(raw, "output"))-2, 0))
	case "terminal/wait_for_exit":
		return "exit " + numberText(res["exitCode"]) + str(res, "signal")
	}
	if len(raw) <= 80 {
		return string(raw)
	}
	return fmt.Sprintf("%d bytes", len(raw))
}

func infoSummary(s *Session, kind string, upd map[string]any) string {
	switch kind {
	case "available_commands_update":
		var names []string
		for _, c := range arr(upd, "availableCommands") {
			cm, _ := c.(map[string]any)
			names = append(names, "/"+str(cm, "name"))
		}
		return fmt.Sprintf("%d commands: %s", len(names), strings.Join(names, " "))
	case "current_mode_update":
		s.Mode = str(upd, "currentModeId")
		return "mode " + s.Mode
	case "config_option_update":
		var kv []string
		for _, c := range arr(upd, "configOptions") {
			cm, _ := c.(map[string]any)
			kv = append(kv, str(cm, "id")+"="+fmt.Sprint(cm["currentValue"]))
		}
		return "config " + strings.Join(kv, " ")
	case "session_info_update":
		if t, ok := upd["title"].(string); ok {
			s.Title = t
		}
		return fmt.Sprintf("title %q", str(upd, "title"))
	case "terminal_update":
		return fmt.Sprintf("terminal %s %s", str(upd, "terminalId"), str(upd, "command"))
	case "terminal_output_chunk":
		return fmt.Sprintf("terminal %s output, %d bytes base64", str(upd, "terminalId"), len(str(upd, "data")))
	case "usage_update":
		return fmt.Sprintf("context %s of %s tokens used", numberText(upd["used"]), numberText(upd["size"]))
	}
	if kind == "" {
		return "session/update without update.sessionUpdate"
	}
	return kind
}

// stateUpdate handles the v2 draft's turn state: "idle" ends the running
// prompt turn with its stopReason (v2 prompts only acknowledge).
func (b *builder) stateUpdate(u unit, s *Session, upd map[string]any, raw []byte) {
	state := str(upd, "state")
	it := &Item{Kind: ItemInfo, Seqs: []uint64{u.Seq}, Update: "state_update", Raw: json.RawMessage(raw), Summary: "state " + state}
	if reason := str(upd, "stopReason"); reason != "" {
		it.Summary += " (" + reason + ")"
	}
	s.add(it)
	t := s.current()
	if state != "idle" || t.PromptSeq == 0 || t.StopReason != "" {
		return
	}
	t.StopReason, t.EndSeq = str(upd, "stopReason"), u.Seq
	if e := obj(upd, "error"); e != nil {
		t.Error = str(e, "message")
	}
}
