package protocol

import (
	"fmt"
	"io"
	"strings"
)

// RenderOptions tune RenderMarkdown.
type RenderOptions struct {
	// MaxContent caps tool content, raw input/output and verbatim updates
	// (in characters); 0 means 400.
	MaxContent int
}

// RenderMarkdown writes the transcript as Markdown: a section per
// session, a subsection per turn, and each item with the sequence numbers
// it came from, so a reader can find the messages behind it.
func RenderMarkdown(w io.Writer, t *Transcript, opts RenderOptions) error {
	if opts.MaxContent <= 0 {
		opts.MaxContent = 400
	}
	r := &renderer{w: w, max: opts.MaxContent}
	r.printf("# Transcript\n\n")
	if t.Version != 0 || t.Agent != "" || t.Client != "" {
		r.printf("protocol v%d · agent %s · client %s\n\n", t.Version, orDash(t.Agent), orDash(t.Client))
	}
	for _, s := range t.Sessions {
		r.session(s)
	}
	return r.err
}

type renderer struct {
	w   io.Writer
	max int
	err error
}

func (r *renderer) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, args...)
	}
}

func (r *renderer) session(s *Session) {
	hop := ""
	if s.Hop > 0 {
		hop = " " + HopLabel(s.Hop) + " (what a proxy and its successor said)"
	}
	r.printf("## Session %s (%s%s)%s\n\n", s.ID, s.Origin, strings.Replace(seqNote(s.Seqs), ", ", "; ", 1), hop)
	if s.Title != "" {
		r.printf("title: %s\n", s.Title)
	}
	if s.Mode != "" {
		r.printf("mode: %s\n", s.Mode)
	}
	if s.Title != "" || s.Mode != "" {
		r.printf("\n")
	}
	for _, t := range s.Turns {
		r.turn(t)
	}
}

func (r *renderer) turn(t *Turn) {
	switch {
	case t.Replayed:
		r.printf("### Turn %d (replayed by session/load)\n\n", t.Index)
	case t.PromptSeq == 0:
		r.printf("### Before the first prompt\n\n")
	default:
		end := "unanswered"
		switch {
		case t.Error != "":
			end = "error: " + t.Error
		case t.StopReason != "":
			end = t.StopReason
		case t.EndSeq != 0:
			end = "no stopReason"
		case t.AcceptSeq != 0:
			end = "accepted, still running"
		}
		r.printf("### Turn %d · %s%s\n\n", t.Index, end, paren(seqNote(nonZero(t.PromptSeq, t.AcceptSeq, t.EndSeq))))
		if t.CancelSeq != 0 {
			r.printf("cancelled by the client (seq %d)\n\n", t.CancelSeq)
		}
		var parts []string
		for _, b := range t.Prompt {
			parts = append(parts, b.Summary())
		}
		r.printf("**User** (seq %d):\n%s\n\n", t.PromptSeq, quote(strings.Join(parts, "\n")))
	}
	for _, it := range t.Items {
		r.item(it)
	}
}

func (r *renderer) item(it *Item) {
	note := seqNote(it.Seqs)
	switch it.Kind {
	case ItemUser, ItemAgent, ItemThought:
		label := map[ItemKind]string{ItemUser: "User", ItemAgent: "Agent", ItemThought: "Thought"}[it.Kind]
		if it.MessageID != "" {
			note += ", message " + it.MessageID
		}
		r.printf("**%s**%s:\n%s\n\n", label, paren(note), quote(it.Text))
	case ItemTool:
		r.tool(it.Tool, note)
	case ItemPlan:
		r.printf("**Plan**%s:\n", paren(note))
		for _, e := range it.Plan.Entries {
			r.printf("- [%s] %s (%s)\n", e.Status, e.Content, e.Priority)
		}
		r.printf("\n")
	case ItemPermission:
		p := it.Permission
		var opts []string
		for _, o := range p.Options {
			opts = append(opts, fmt.Sprintf("%s=%s", o.ID, o.Kind))
		}
		answer := "unanswered"
		switch p.Outcome {
		case "selected":
			answer = "selected " + p.OptionID
			if o, ok := p.Chosen(); ok {
				answer += " (" + o.Kind + ")"
			}
		case "cancelled":
			answer = "cancelled"
		case "error":
			answer = "error: " + p.Error
		}
		r.printf("**Permission**%s: %s [%s] options %s → %s\n\n", paren(note), p.Title, p.ToolCallID, strings.Join(opts, ", "), answer)
	case ItemCall:
		c := it.Call
		answer := c.Result
		if c.Error != "" {
			answer = "error: " + c.Error
		}
		r.printf("**%s**%s: %s → %s\n\n", c.Method, paren(note), c.Summary, orDash(answer))
	case ItemMCP:
		r.printf("**MCP**%s: %s\n\n", paren(note), mcpLine(it.MCP, r.cut))
	case ItemInfo:
		r.printf("- %s%s: %s\n\n", it.Update, paren(note), it.Summary)
	case ItemUnknown:
		r.printf("- unknown update %q%s: %s\n\n", it.Update, paren(note), r.cut(string(it.Raw)))
	}
}

func (r *renderer) tool(tc *ToolCall, note string) {
	r.printf("**Tool** %s%s: %s", tc.ID, paren(note), tc.Title)
	if tc.Kind != "" {
		r.printf(" · kind %s", tc.Kind)
	}
	if len(tc.Statuses) > 0 {
		r.printf(" · %s", strings.Join(tc.Statuses, " → "))
	}
	r.printf("\n")
	for _, l := range tc.Locations {
		if l.Line > 0 {
			r.printf("- location %s:%d\n", l.Path, l.Line)
		} else {
			r.printf("- location %s\n", l.Path)
		}
	}
	if len(tc.RawInput) > 0 {
		r.printf("- input %s\n", r.cut(string(tc.RawInput)))
	}
	for _, c := range tc.Content {
		switch c.Type {
		case "content":
			r.printf("- content %s\n", r.cut(c.Block.Summary()))
		case "diff":
			old := "(new file)"
			if c.HasOld {
				old = fmt.Sprintf("%d chars", len(c.OldText))
			}
			r.printf("- diff %s: %s → %d chars\n", c.Path, old, len(c.NewText))
		case "terminal":
			r.printf("- terminal %s\n", c.TerminalID)
		default:
			r.printf("- %s\n", c.Type)
		}
	}
	if len(tc.RawOutput) > 0 {
		r.printf("- output %s\n", r.cut(string(tc.RawOutput)))
	}
	for _, c := range tc.MCP {
		r.printf("- MCP%s %s\n", paren(seqNote(c.Seqs)), mcpLine(c, r.cut))
	}
	r.printf("\n")
}

// cut shortens s to the configured length on one line.
func (r *renderer) cut(s string) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if rs := []rune(s); len(rs) > r.max {
		return string(rs[:r.max]) + fmt.Sprintf("… (%d more chars)", len(rs)-r.max)
	}
	return s
}

// seqNote renders ", seq 3" / ", seq 3, 4" / ", seq 3–9, 5 messages".
func seqNote(seqs []uint64) string {
	switch len(seqs) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(", seq %d", seqs[0])
	case 2:
		return fmt.Sprintf(", seq %d, %d", seqs[0], seqs[1])
	}
	lo, hi := seqs[0], seqs[0]
	for _, s := range seqs {
		lo, hi = min(lo, s), max(hi, s)
	}
	return fmt.Sprintf(", seq %d–%d, %d messages", lo, hi, len(seqs))
}

func paren(note string) string {
	if note == "" {
		return ""
	}
	return " (" + strings.TrimPrefix(note, ", ") + ")"
}

func nonZero(seqs ...uint64) []uint64 {
	var out []uint64
	for _, s := range seqs {
		if s != 0 {
			out = append(out, s)
		}
	}
	return out
}

func quote(s string) string {
	if s == "" {
		return "> (empty)"
	}
	return "> " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n> ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
