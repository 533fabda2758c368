package protocol

import "github.com/acpscope/acpscope/wire"

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
func UpdateKind(body []byte) string {
	m := Msg{Body: body}
	params := m.params()
	if len(params) == 0 || params[0] != '{' {
		return ""
	}
	upd := wire.Value(params, "update")
	if len(upd) == 0 || upd[0] != '{' {
		return ""
	}
	return wire.StringMember(upd, "sessionUpdate")
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
