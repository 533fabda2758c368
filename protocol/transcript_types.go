package protocol

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Transcript is the conversation rebuilt from a capture: per ACP
// session, its turns and what happened in each. Every element keeps the
// sequence numbers of the messages it came from.
type Transcript struct {
	// Version is the negotiated protocol version (0 when not seen).
	Version  int
	Client   string // clientInfo name and version, when sent
	Agent    string // agentInfo name and version, when sent
	Sessions []*Session
}

// Session is one ACP session, as one proxy-chain hop saw it.
type Session struct {
	ID string
	// Hop is the proxy-chain hop the session's messages travelled at: 0
	// for the capture's own peers, 1 for the conversation a proxy holds
	// with its successor through wrappers.
	Hop uint8
	// Origin is how the session came to be: "new", "load", "resume",
	// "fork", or "unknown" when the capture starts inside it.
	Origin string
	Seqs   []uint64 // the request and response that opened it
	Title  string   // from session_info_update
	Mode   string   // from current_mode_update or the session/new result
	// Plan is the latest plan; Plans keeps every one, oldest first.
	Plan  *Plan
	Plans []*Plan
	Turns []*Turn

	loading *Turn // the replay turn while session/load runs
	tools   map[string]*Item
}

// Turn is one session/prompt and what it caused. Turn 0 collects what
// arrived before the first prompt; replayed turns come from session/load.
type Turn struct {
	Index    int
	Replayed bool
	Prompt   []Block
	// PromptSeq and EndSeq are the prompt request and what ended its
	// turn: the response in v1, the state_update "idle" in v2.
	PromptSeq uint64
	EndSeq    uint64
	// AcceptSeq is the v2 response that accepted the prompt (0 in v1).
	AcceptSeq  uint64
	StopReason string
	Error      string // error.message of an error response
	CancelSeq  uint64 // a session/cancel for this turn
	Items      []*Item
}

// ItemKind tells what an Item shows.
type ItemKind string

// The kinds of transcript item.
const (
	ItemUser       ItemKind = "user"
	ItemAgent      ItemKind = "agent"
	ItemThought    ItemKind = "thought"
	ItemTool       ItemKind = "tool"
	ItemPlan       ItemKind = "plan"
	ItemPermission ItemKind = "permission"
	ItemCall       ItemKind = "call"    // fs/*, terminal/*, elicitation
	ItemMCP        ItemKind = "mcp"     // an MCP tools/call over ACP no tool call is known to have caused
	ItemInfo       ItemKind = "info"    // commands, mode, config, title, usage, unstable variants
	ItemUnknown    ItemKind = "unknown" // an unknown sessionUpdate, kept verbatim
)

// Item is one element of a turn.
type Item struct {
	Kind     ItemKind
	Seqs     []uint64
	Replayed bool
	// MessageID groups message chunks (messageId); a change starts a new item.
	MessageID string
	// Text is the joined text of user, agent and thought chunks; other
	// content blocks appear summarised in brackets.
	Text       string
	Tool       *ToolCall
	Plan       *Plan
	Permission *Permission
	Call       *ClientCall
	MCP        *MCPCall
	// Update is the sessionUpdate name of info and unknown items, Summary
	// a line about it and Raw the update verbatim.
	Update  string
	Summary string
	Raw     json.RawMessage
}

// Block is a content block, summarised.
type Block struct {
	Type     string
	Text     string // text blocks, and the text of embedded resources
	MimeType string
	URI      string
	Name     string
	Size     int // bytes of base64 data or blob
}

// Summary renders the block on one line: text as is, others in brackets.
func (b Block) Summary() string {
	switch b.Type {
	case "text":
		return b.Text
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %d bytes base64]", b.Type, b.MimeType, b.Size)
	case "resource_link":
		return fmt.Sprintf("[link %s %s]", b.Name, b.URI)
	case "resource":
		if b.Text != "" {
			return fmt.Sprintf("[resource %s, %d chars]", b.URI, len(b.Text))
		}
		return fmt.Sprintf("[resource %s, %d bytes blob]", b.URI, b.Size)
	}
	return fmt.Sprintf("[%s]", b.Type)
}

// ToolCall is a tool_call merged with its tool_call_updates by
// toolCallId; later values of a field replace earlier ones.
type ToolCall struct {
	ID     string
	Title  string
	Kind   string
	Status string // the latest status
	// Statuses is the status history, without repeats.
	Statuses  []string
	Content   []ToolContent
	Locations []Location
	RawInput  json.RawMessage
	RawOutput json.RawMessage
	// MCP lists the MCP tools/call requests over ACP this tool call made.
	MCP []*MCPCall
}

// ToolContent is one element of a tool call's content.
type ToolContent struct {
	Type  string // "content", "diff", "terminal"
	Block *Block // for "content"
	// Path, OldText and NewText describe a diff; HasOld is false for a
	// new file.
	Path       string
	OldText    string
	NewText    string
	HasOld     bool
	TerminalID string
}

// Location is a file a tool call touches.
type Location struct {
	Path string
	Line int
}

// Plan is one plan update.
type Plan struct {
	Seq     uint64
	Entries []PlanEntry
}

// PlanEntry is one line of a plan.
type PlanEntry struct {
	Content  string
	Priority string
	Status   string
}

// Permission is a session/request_permission and the client's answer.
type Permission struct {
	ToolCallID string
	Title      string
	Options    []PermissionOption
	// Outcome is "selected", "cancelled", "error" or "" while unanswered;
	// OptionID is the chosen option.
	Outcome  string
	OptionID string
	Error    string
}

// PermissionOption is one choice offered to the user.
type PermissionOption struct {
	ID   string
	Name string
	Kind string
}

// Chosen returns the chosen option, if any.
func (p *Permission) Chosen() (PermissionOption, bool) {
	for _, o := range p.Options {
		if o.ID == p.OptionID && p.Outcome == "selected" {
			return o, true
		}
	}
	return PermissionOption{}, false
}

// ClientCall is a request the agent made of the client (fs/*, terminal/*,
// elicitation) with a summary of its answer.
type ClientCall struct {
	Method  string
	Summary string // what was asked: a path, a command line
	Result  string // a summary of the result
	Error   string
}

// Session returns the session with the given id, or nil; the capture's
// own (hop 0) before one a proxy held with its successor.
func (t *Transcript) Session(id string) *Session {
	var other *Session
	for _, s := range t.Sessions {
		switch {
		case s.ID != id:
		case s.Hop == 0:
			return s
		case other == nil:
			other = s
		}
	}
	return other
}

// AgentText joins the agent's messages of the turn, the text replay
// compares when it checks a new run against a recording.
func (t *Turn) AgentText() string {
	var b strings.Builder
	for _, it := range t.Items {
		if it.Kind == ItemAgent {
			b.WriteString(it.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the turn's tool calls in the order they started.
func (t *Turn) ToolCalls() []*ToolCall {
	var out []*ToolCall
	for _, it := range t.Items {
		if it.Kind == ItemTool {
			out = append(out, it.Tool)
		}
	}
	return out
}

// PromptTurns returns the session's turns that answer a session/prompt,
// leaving out the setup turn and replayed history.
func (s *Session) PromptTurns() []*Turn {
	var out []*Turn
	for _, t := range s.Turns {
		if t.PromptSeq != 0 {
			out = append(out, t)
		}
	}
	return out
}

// Locate finds the session, turn and item a message belongs to, so a
// viewer can go from a row of the message table to the conversation. The
// prompt request and its response belong to their turn with a nil item.
func (t *Transcript) Locate(seq uint64) (*Session, *Turn, *Item) {
	for _, s := range t.Sessions {
		for _, turn := range s.Turns {
			if seq != 0 && (turn.PromptSeq == seq || turn.EndSeq == seq || turn.CancelSeq == seq) {
				return s, turn, nil
			}
			for _, it := range turn.Items {
				if slices.Contains(it.Seqs, seq) {
					return s, turn, it
				}
			}
		}
	}
	return nil, nil, nil
}
