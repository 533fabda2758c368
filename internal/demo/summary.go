package demo

import (
	"fmt"
	"sort"
	"strings"
)

// Summary is what the demo client saw in one conversation.
type Summary struct {
	AgentName       string
	AgentVersion    string
	ProtocolVersion int
	LoadSession     bool // the agent offered session/load
	Sessions        []SessionSummary
	Files           map[string]string // the in-memory workspace at the end
}

// SessionSummary is one ACP session.
type SessionSummary struct {
	ID       string
	Title    string   // the last session_info_update title
	Turns    []Turn   // one per session/prompt, in order
	Between  []string // sessionUpdate kinds received outside any prompt or load
	Replayed []string // sessionUpdate kinds replayed by session/load
}

// Turn is one session/prompt and everything the agent sent while it ran.
type Turn struct {
	Prompt        string // the prompt's text blocks joined
	StopReason    string
	Message       string   // agent_message_chunk texts joined, one line per messageId
	Thought       string   // agent_thought_chunk texts joined
	Updates       []string // sessionUpdate kinds in wire order
	AgentRequests []string // methods of the agent's requests in wire order
	ToolCalls     []ToolCall
	Plan          []string // the last plan, as "content: status"
	Permission    string   // the option chosen, or "cancelled"
	Cancelled     bool     // the client sent session/cancel during this turn
	Usage         int      // tokens used, from the last usage_update

	lastMessageID string // a new messageId starts a new line in Message
}

// ToolCall is a tool call's latest state.
type ToolCall struct {
	ID, Title, Kind, Status string
}

func (t *Turn) toolCall(id string) *ToolCall {
	for i := range t.ToolCalls {
		if t.ToolCalls[i].ID == id {
			return &t.ToolCalls[i]
		}
	}
	t.ToolCalls = append(t.ToolCalls, ToolCall{ID: id})
	return &t.ToolCalls[len(t.ToolCalls)-1]
}

// Messages counts session/update notifications received in all sessions.
func (s Summary) Messages() int {
	n := 0
	for _, ss := range s.Sessions {
		n += len(ss.Between) + len(ss.Replayed)
		for _, t := range ss.Turns {
			n += len(t.Updates)
		}
	}
	return n
}

// String renders the summary for a person: one block per session.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent %s %s (protocol v%d)\n", s.AgentName, s.AgentVersion, s.ProtocolVersion)
	for _, ss := range s.Sessions {
		fmt.Fprintf(&b, "session %s", ss.ID)
		if ss.Title != "" {
			fmt.Fprintf(&b, " %q", ss.Title)
		}
		b.WriteString("\n")
		for i, t := range ss.Turns {
			fmt.Fprintf(&b, "  turn %d: %q → %s, %d updates, agent requests: %s\n",
				i+1, t.Prompt, t.StopReason, len(t.Updates), strings.Join(t.AgentRequests, ", "))
			for _, tc := range t.ToolCalls {
				fmt.Fprintf(&b, "    tool %s %s (%s): %s\n", tc.ID, tc.Title, tc.Kind, tc.Status)
			}
			if t.Message != "" {
				fmt.Fprintf(&b, "    agent: %s\n", t.Message)
			}
		}
		if len(ss.Replayed) > 0 {
			fmt.Fprintf(&b, "  session/load replayed %d updates\n", len(ss.Replayed))
		}
	}
	names := make([]string, 0, len(s.Files))
	for name := range s.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "workspace %s: %d bytes\n", name, len(s.Files[name]))
	}
	return b.String()
}
