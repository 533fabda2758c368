package replay

import (
	"fmt"
	"io"
	"strings"

	"github.com/acpscope/acpscope/protocol"
)

// WriteEntries prints a comparison for people: one line per message that
// is missing, extra or changed (with its field changes indented), and a
// count of the messages that matched. oldName and newName label the sides.
func WriteEntries(w io.Writer, entries []Entry, oldName, newName string) {
	same := 0
	for _, e := range entries {
		switch e.Op {
		case OpSame:
			same++
		case OpRemoved:
			fmt.Fprintf(w, "- missing  %s #%d %s\n", oldName, e.A.First().Seq, describe(e.A))
		case OpAdded:
			fmt.Fprintf(w, "+ extra    %s #%d %s\n", newName, e.B.First().Seq, describe(e.B))
		case OpChanged:
			fmt.Fprintf(w, "~ changed  %s #%d ↔ %s #%d %s%s\n", oldName, e.A.First().Seq, newName, e.B.First().Seq, describe(e.A), faultMark(e.B.First()))
			for _, c := range e.Changes {
				fmt.Fprintf(w, "      %s\n", c)
			}
		}
	}
	fmt.Fprintf(w, "%d matched, %s\n", same, Count(len(entries)-same, "differs", "differ"))
}

// describe names an item: direction arrow, kind and summary.
func describe(it *Item) string {
	m := it.First()
	kind := m.Kind.String()
	s := fmt.Sprintf("%s %s %s", dirLabel(m), kind, it.Summary())
	if it.Folded() && it.Text != "" {
		s += " " + short(quote(it.Text))
	}
	return s + faultMark(m)
}

// faultMark says, after a message's description, that acpscope altered
// it: " ⚑ dropped by rule lose-answers".
func faultMark(m *protocol.Msg) string {
	f := m.Fault
	switch {
	case f == nil:
		return ""
	case f.Rule != "":
		return " ⚑ " + f.Stage + " by rule " + f.Rule
	}
	return " ⚑ " + f.Stage + " by " + f.By
}

func dirLabel(m *protocol.Msg) string {
	if m.Dir.String() == "client" {
		return "client→agent"
	}
	return "agent→client"
}

// JSONEntry is the --json form of an entry.
type JSONEntry struct {
	Op      Op       `json:"op"`
	OldSeq  uint64   `json:"oldSeq,omitempty"`
	NewSeq  uint64   `json:"newSeq,omitempty"`
	Dir     string   `json:"dir"`
	Kind    string   `json:"kind"`
	Method  string   `json:"method,omitempty"`
	Update  string   `json:"update,omitempty"`
	Count   int      `json:"count,omitempty"` // messages in a chunk run
	Changes []Change `json:"changes,omitempty"`
}

// JSONEntries converts entries for machine output, dropping the same ones.
func JSONEntries(entries []Entry) []JSONEntry {
	out := []JSONEntry{}
	for _, e := range entries {
		if e.Op == OpSame {
			continue
		}
		it := e.A
		if it == nil {
			it = e.B
		}
		m := it.First()
		je := JSONEntry{Op: e.Op, Dir: m.Dir.String(), Kind: m.Kind.String(), Method: m.Method, Update: it.Update, Changes: e.Changes}
		if e.A != nil {
			je.OldSeq = e.A.First().Seq
		}
		if e.B != nil {
			je.NewSeq = e.B.First().Seq
		}
		if len(it.Msgs) > 1 {
			je.Count = len(it.Msgs)
		}
		out = append(out, je)
	}
	return out
}

// oneLine flattens text for single-line output.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Count says "1 note" or "3 notes": n with the word that fits it.
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// idTag is " [id]" for a message with an id, "" for one without (a
// notification), so a log line never shows an empty "[]".
func idTag(id []byte) string {
	if len(id) == 0 {
		return ""
	}
	return " [" + string(id) + "]"
}
