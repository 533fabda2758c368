package replay

import (
	"encoding/json"
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Item is what alignment works on: one message, or a run of streamed
// chunks of the same kind folded into one.
type Item struct {
	Msgs []*protocol.Msg
	// Update is the session/update subtype (update.sessionUpdate), if any.
	Update string
	// Text joins a chunk run's text; empty for single messages.
	Text string
}

// First returns the item's first message.
func (it *Item) First() *protocol.Msg { return it.Msgs[0] }

// Folded reports whether the item is a chunk run.
func (it *Item) Folded() bool { return protocol.IsMessageChunk(it.Update) }

// Key is what sequence alignment compares: direction, kind, method and
// update subtype. Errors align with results: both answer a request.
func (it *Item) Key() string {
	m := it.First()
	kind := m.Kind.String()
	if m.Kind.IsResponse() {
		kind = "response"
	}
	return m.Dir.String() + " " + kind + " " + m.Method + " " + it.Update
}

// Fold groups msgs into items. Consecutive message chunks of the same
// subtype and session fold into one item with their text joined, unless
// strict: runs are compared as joined text, the split into chunks being
// the model's whim. (The transcript joins chunks for display; here only
// each run's joined text is needed.)
func Fold(msgs []protocol.Msg, strict bool) []Item { return fold(msgs, strict, false) }

// fold is Fold; apart keeps a chunk that never reached its receiver
// (dropped by a fault plan, or replaced) out of runs, for drawings of
// every record, where joined its text would read as received.
func fold(msgs []protocol.Msg, strict, apart bool) []Item {
	var items []Item
	for i := range msgs {
		m := &msgs[i]
		sub, text := protocol.UpdateOf(m)
		if !strict && protocol.IsMessageChunk(sub) && len(items) > 0 && (!apart || m.Fault.Delivered()) {
			last := &items[len(items)-1]
			if last.Update == sub && last.First().Session == m.Session && (!apart || last.Msgs[len(last.Msgs)-1].Fault.Delivered()) {
				last.Msgs = append(last.Msgs, m)
				last.Text += text
				continue
			}
		}
		it := Item{Msgs: []*protocol.Msg{m}, Update: sub}
		if protocol.IsMessageChunk(sub) {
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
	case m.Kind.IsResponse():
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
func resultHint(m *protocol.Msg) string {
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
