package demo

import (
	"encoding/json"
	"strings"
)

// update is the part of a session/update the client keeps.
type update struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Content       json.RawMessage `json:"content"`
	MessageID     string          `json:"messageId"`
	ToolCallID    string          `json:"toolCallId"`
	Title         *string         `json:"title"`
	Kind          string          `json:"kind"`
	Status        string          `json:"status"`
	Used          int             `json:"used"`
	Entries       []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"entries"`
}

// notification records session/update; other notifications are ignored,
// as the protocol asks. An update for a session the client never opened
// is a protocol error, except while session/new is in flight: agents
// such as goose announce commands and modes for the new session before
// answering, so those updates wait for the answer (see newSession).
func (cl *client) notification(method string, params json.RawMessage) error {
	if method != "session/update" {
		return nil
	}
	var p struct {
		SessionID string  `json:"sessionId"`
		Update    *update `json:"update"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Update == nil || p.Update.SessionUpdate == "" {
		return protocolErrorf("session/update params %.120q lack sessionId/update.sessionUpdate", params)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	i, ok := cl.sessions[p.SessionID]
	if !ok && cl.creating {
		cl.early = append(cl.early, earlyUpdate{p.SessionID, p.Update.SessionUpdate})
		return nil
	}
	if !ok {
		return protocolErrorf("session/update for unknown session %q", p.SessionID)
	}
	s := &cl.sum.Sessions[i]
	u := p.Update
	if u.SessionUpdate == "session_info_update" && u.Title != nil {
		s.Title = *u.Title
	}
	switch {
	case cl.loading == p.SessionID:
		s.Replayed = append(s.Replayed, u.SessionUpdate)
	case cl.turn != nil:
		cl.turn.record(u)
	default:
		s.Between = append(s.Between, u.SessionUpdate)
	}
	return nil
}

// earlyUpdate is a session/update that arrived before the session/new
// answer naming its session.
type earlyUpdate struct{ session, kind string }

// adoptEarly files the updates that came before session/new's answer
// under the new session; any naming another session is a protocol error.
// Called with cl.mu held.
func (cl *client) adoptEarly(id string) error {
	early := cl.early
	cl.early, cl.creating = nil, false
	s := &cl.sum.Sessions[cl.sessions[id]]
	for _, e := range early {
		if e.session != id {
			return protocolErrorf("session/update for unknown session %q (session/new answered %q)", e.session, id)
		}
		s.Between = append(s.Between, e.kind)
	}
	return nil
}

func (t *Turn) record(u *update) {
	t.Updates = append(t.Updates, u.SessionUpdate)
	switch u.SessionUpdate {
	case "agent_message_chunk":
		if u.MessageID != t.lastMessageID && t.Message != "" {
			t.Message += "\n"
		}
		t.lastMessageID = u.MessageID
		t.Message += blockText(u.Content)
	case "agent_thought_chunk":
		t.Thought += blockText(u.Content)
	case "tool_call", "tool_call_update":
		tc := t.toolCall(u.ToolCallID)
		if u.Title != nil {
			tc.Title = *u.Title
		}
		if u.Kind != "" {
			tc.Kind = u.Kind
		}
		if u.Status != "" {
			tc.Status = u.Status
		}
	case "plan":
		t.Plan = t.Plan[:0]
		for _, e := range u.Entries {
			t.Plan = append(t.Plan, e.Content+": "+e.Status)
		}
	case "usage_update":
		t.Usage = u.Used
	}
}

// blockText returns a text content block's text ("" for other blocks).
func blockText(raw json.RawMessage) string {
	var b struct{ Type, Text string }
	if json.Unmarshal(raw, &b) != nil || b.Type != "text" {
		return ""
	}
	return strings.Clone(b.Text)
}
