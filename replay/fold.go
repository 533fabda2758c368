package replay

import (
	"encoding/json"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// Item is what alignment works on: one message, or a run of streamed
// chunks of the same kind folded into one.
type Item struct {
	Msgs []*Message
	// Update is the session/update subtype (update.sessionUpdate), if any.
	Update string
	// Text joins a chunk run's text; empty for single messages.
	Text string
}

// First returns the item's first message.
func (it *Item) First() *Message { return it.Msgs[0] }

// Folded reports whether the item is a chunk run.
func (it *Item) Folded() bool { return isChunk(it.Update) }

// Key is what sequence alignment compares: direction, kind, method and
// update subtype. Errors align with results: both answer a request.
func (it *Item) Key() string {
	m := it.First()
	kind := m.Kind.String()
	if m.IsResponse() {
		kind = "response"
	}
	return m.Dir.String() + " " + kind + " " + m.Method + " " + it.Update
}

// chunkUpdates are the streamed session/update variants whose runs are
// compared as joined text (the split into chunks is the model's whim).
var chunkUpdates = map[string]bool{
	"agent_message_chunk": true, "agent_thought_chunk": true, "user_message_chunk": true,
}

func isChunk(update string) bool { return chunkUpdates[update] }

// updateShape is the part of a session/update we read.
type updateShape struct {
	Params struct {
		Update struct {
			SessionUpdate string          `json:"sessionUpdate"`
			Content       json.RawMessage `json:"content"` // a block, or a tool call's list

		} `json:"update"`
	} `json:"params"`
}

// updateOf returns a session/update's subtype and chunk text.
func updateOf(m *Message) (subtype, text string) {
	if m.Method != "session/update" || m.Kind != wire.KindNotification {
		return "", ""
	}
	var u updateShape
	if json.Unmarshal(m.Body, &u) != nil {
		return "", ""
	}
	var block struct {
		Text string `json:"text"`
	}
	if c := u.Params.Update.Content; len(c) > 0 && c[0] == '{' {
		_ = json.Unmarshal(c, &block)
	}
	return u.Params.Update.SessionUpdate, block.Text
}

// Fold groups msgs into items. Consecutive chunks of the same subtype and
// session fold into one item with their text joined, unless strict. (The
// protocol package's transcript builder joins chunks for display; here we
// only need the joined text of each run, so this stays self-contained.)
func Fold(msgs []Message, strict bool) []Item {
	var items []Item
	for i := range msgs {
		m := &msgs[i]
		sub, text := updateOf(m)
		if !strict && isChunk(sub) && len(items) > 0 {
			last := &items[len(items)-1]
			if last.Update == sub && last.First().Session == m.Session {
				last.Msgs = append(last.Msgs, m)
				last.Text += text
				continue
			}
		}
		it := Item{Msgs: []*Message{m}, Update: sub}
		if isChunk(sub) {
			it.Text = text
		}
		items = append(items, it)
	}
	return items
}

// Summary is a one-line description of an item for reports and diagrams.
func (it *Item) Summary() string {
	m := it.First()
	var b strings.Builder
	b.WriteString(m.Method)
	switch {
	case m.Kind == wire.KindError:
		b.WriteString(" error")
		if c := wire.Classify(m.Body); c.HasErrorCode {
			b.WriteString(" " + itoa(c.ErrorCode))
		}
	case m.IsResponse():
		b.WriteString(" result")
		if r := resultHint(m); r != "" {
			b.WriteString(" " + r)
		}
	}
	if it.Update != "" {
		b.WriteString(" " + it.Update)
	}
	if len(it.Msgs) > 1 {
		b.WriteString(" ×" + itoa(int64(len(it.Msgs))))
	}
	return b.String()
}

// resultHint picks the telling field of common results.
func resultHint(m *Message) string {
	c := wire.Classify(m.Body)
	if len(c.Result) == 0 || c.Result[0] != '{' {
		return ""
	}
	if s := wire.StringMember(c.Result, "stopReason"); s != "" {
		return s
	}
	if s := wire.StringMember(c.Result, "sessionId"); s != "" {
		return "sessionId=" + s
	}
	if s := wire.StringMember(c.Result, "terminalId"); s != "" {
		return "terminalId=" + s
	}
	if o := wire.Value(c.Result, "outcome"); len(o) > 0 && o[0] == '{' {
		if s := wire.StringMember(o, "optionId"); s != "" {
			return s
		}
		return wire.StringMember(o, "outcome")
	}
	return ""
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
