package protocol

import (
	"bytes"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// UpdateVariant describes one session/update variant.
type UpdateVariant struct {
	Name      string
	Stability Stability
}

// The session/update variants (update.sessionUpdate).
var updateVariants = []UpdateVariant{
	{"user_message_chunk", Stable},
	{"agent_message_chunk", Stable},
	{"agent_thought_chunk", Stable},
	{"tool_call", Stable},
	{"tool_call_update", Stable},
	{"plan", Stable},
	{"available_commands_update", Stable},
	{"current_mode_update", Stable},
	{"config_option_update", Stable},
	{"session_info_update", Stable},
	{"usage_update", Stable},
	{"plan_update", Unstable},
	{"plan_removed", Unstable},
	{"notice", Unstable},
	{"compaction_update", Unstable},
	{"compaction_summary_chunk", Unstable},
	{"state_update", V2Draft},
	{"user_message", V2Draft},
	{"agent_message", V2Draft},
	{"agent_thought", V2Draft},
	{"tool_call_content_chunk", V2Draft},
	{"terminal_update", V2Draft},
	{"terminal_output_chunk", V2Draft},
}

// UpdateVariants returns the known session/update variants.
func UpdateVariants() []UpdateVariant {
	out := make([]UpdateVariant, len(updateVariants))
	copy(out, updateVariants)
	return out
}

// LookupUpdate returns the stability of a sessionUpdate name; ok is false
// for unknown variants (which viewers must still show).
func LookupUpdate(name string) (Stability, bool) {
	for _, v := range updateVariants {
		if v.Name == name {
			return v.Stability, true
		}
	}
	return Unknown, false
}

// UpdateKind returns params.update.sessionUpdate of a session/update
// message body (the whole JSON-RPC object), or "" when there is none.
// Seed 004's update.kind is not the discriminator and is not consulted.
// body may be anything; UpdateOf reads a classified message faster.
func UpdateKind(body []byte) string {
	m := Msg{Body: body}
	if upd := updateOf(m.params()); upd != nil {
		return wire.StringMember(upd, "sessionUpdate")
	}
	return ""
}

// UpdateOf returns the variant of a session/update notification
// (params.update.sessionUpdate) and the text of its content block when it
// has one (a message chunk's text); both are "" for any other message. It
// trusts m.Kind: a notification's bytes were validated when classified.
func UpdateOf(m *Msg) (variant, text string) {
	if m.Kind != wire.KindNotification || m.Method != "session/update" {
		return "", ""
	}
	b := bytes.TrimSpace(m.Body)
	if len(b) == 0 || b[0] != '{' {
		return "", ""
	}
	params := wire.Value(b, "params")
	if IsSuccessor(wire.StringMember(b, "method")) {
		params = Unwrap(m).Params // a session/update a proxy chain carries
	}
	upd := updateOf(params)
	if upd == nil {
		return "", ""
	}
	if c := wire.Value(upd, "content"); len(c) > 0 && c[0] == '{' {
		text = wire.StringMember(c, "text")
	}
	return wire.StringMember(upd, "sessionUpdate"), text
}

// updateOf returns the "update" member of params when both are objects,
// else nil.
func updateOf(params []byte) []byte {
	if len(params) == 0 || params[0] != '{' {
		return nil
	}
	upd := wire.Value(params, "update")
	if len(upd) == 0 || upd[0] != '{' {
		return nil
	}
	return upd
}

// IsMessageChunk reports whether a session/update variant streams a
// message in pieces (user_message_chunk, agent_message_chunk,
// agent_thought_chunk): viewers join a run of them into one text.
func IsMessageChunk(variant string) bool {
	switch variant {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
		return true
	}
	return false
}

// Content block types (ContentBlock.type).
var ContentTypes = []string{"text", "image", "audio", "resource_link", "resource"}

// Stop reasons a session/prompt result may carry.
var StopReasons = []string{"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}

// Permission option kinds of session/request_permission.
var PermissionKinds = []string{"allow_once", "allow_always", "reject_once", "reject_always"}

// Permission outcomes (result.outcome.outcome).
var PermissionOutcomes = []string{"selected", "cancelled"}

// Tool kinds (tool_call.kind).
var ToolKinds = []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}

// Tool call statuses.
var ToolStatuses = []string{"pending", "in_progress", "completed", "failed"}

// Plan entry priorities and statuses.
var (
	PlanPriorities = []string{"high", "medium", "low"}
	PlanStatuses   = []string{"pending", "in_progress", "completed"}
)

// Session states of the v2 draft's state_update.
var SessionStates = []string{"running", "idle", "requires_action"}

// IsStopReasonIn reports whether s is a stop reason under protocol
// version v: one of the five, or from v2 on a custom value starting with
// "_" (RFD "v2 Enum Variant Extension").
func IsStopReasonIn(s string, v int) bool {
	return IsStopReason(s) || v >= 2 && strings.HasPrefix(s, "_")
}

// Tool call content types (tool_call.content[].type).
var ToolContentTypes = []string{"content", "diff", "terminal"}

// Error codes with a meaning in ACP.
var ErrorCodes = map[int64]string{
	-32700: "parse error",
	-32600: "invalid request",
	-32601: "method not found",
	-32602: "invalid params",
	-32603: "internal error",
	-32800: "request cancelled",
	-32000: "authentication required",
	-32002: "resource not found",
}

// IsStopReason reports whether s is one of the five stop reasons.
func IsStopReason(s string) bool { return contains(StopReasons, s) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
