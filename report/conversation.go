package report

import (
	"fmt"
	"strings"

	"github.com/acpscope/acpscope/protocol"
)

// sessionView is one session of the conversation as the page shows it.
type sessionView struct {
	ID, Origin, Title, Mode string
	Seqs                    []uint64
	Turns                   []turnView
}

// turnView is one prompt turn: the prompt, what happened, how it ended.
type turnView struct {
	Label     string
	Replayed  bool
	Prompt    string
	PromptSeq uint64
	EndSeq    uint64
	CancelSeq uint64
	Items     []itemView
}

// itemView is one element of a turn; Kind is the transcript's item kind
// and names its style.
type itemView struct {
	Kind       string
	Label      string
	Text       string
	More       int // bytes of Text left out
	Seqs       []uint64
	Tool       *toolView
	Plan       []protocol.PlanEntry
	Permission *permissionView
	Raw        string
}

type toolView struct {
	ID, Title, Kind, Status string
	Statuses                string
	Locations               []string
	Content                 []contentView
	RawInput, RawOutput     string
}

type contentView struct {
	Type       string
	Text       string
	Path       string
	NewFile    bool
	Diff       []diffLine
	TerminalID string
}

type permissionView struct {
	Title   string
	Options []string
	Outcome string
}

// conversation turns the transcript into the page's sessions; every text
// is cut at max bytes (the table holds the messages themselves).
func conversation(t *protocol.Transcript, max int) []sessionView {
	var out []sessionView
	for _, s := range t.Sessions {
		sv := sessionView{ID: s.ID, Origin: s.Origin, Title: s.Title, Mode: s.Mode, Seqs: s.Seqs}
		for _, turn := range s.Turns {
			if tv := turnOf(turn, max); len(tv.Items) > 0 || tv.PromptSeq != 0 {
				sv.Turns = append(sv.Turns, tv)
			}
		}
		out = append(out, sv)
	}
	return out
}

func turnOf(t *protocol.Turn, max int) turnView {
	tv := turnView{Replayed: t.Replayed, PromptSeq: t.PromptSeq, EndSeq: t.EndSeq, CancelSeq: t.CancelSeq}
	switch {
	case t.Replayed:
		tv.Label = fmt.Sprintf("Turn %d, replayed by session/load", t.Index)
	case t.PromptSeq == 0:
		tv.Label = "Before the first prompt"
	default:
		end := "unanswered"
		switch {
		case t.Error != "":
			end = "error: " + t.Error
		case t.StopReason != "":
			end = t.StopReason
		case t.EndSeq != 0:
			end = "no stopReason"
		}
		tv.Label = fmt.Sprintf("Turn %d · %s", t.Index, end)
	}
	var prompt []string
	for _, b := range t.Prompt {
		prompt = append(prompt, b.Summary())
	}
	tv.Prompt = cut(strings.Join(prompt, "\n"), max)
	for _, it := range t.Items {
		tv.Items = append(tv.Items, itemOf(it, max))
	}
	return tv
}

func itemOf(it *protocol.Item, max int) itemView {
	iv := itemView{Kind: string(it.Kind), Seqs: it.Seqs}
	iv.Text, iv.More = clip(it.Text, max)
	switch it.Kind {
	case protocol.ItemUser:
		iv.Label = "user"
	case protocol.ItemAgent:
		iv.Label = "agent"
	case protocol.ItemThought:
		iv.Label = "thought"
	case protocol.ItemTool:
		iv.Label, iv.Tool = "tool call", toolOf(it.Tool, max)
	case protocol.ItemPlan:
		iv.Label = "plan"
		if it.Plan != nil {
			iv.Plan = it.Plan.Entries
		}
	case protocol.ItemPermission:
		iv.Label, iv.Permission = "permission", permissionOf(it.Permission)
	case protocol.ItemCall:
		iv.Label, iv.Text = callOf(it.Call)
		iv.Text, iv.More = clip(iv.Text, max)
	default:
		iv.Label = it.Update
		iv.Text, iv.More = clip(it.Summary, max)
		if len(it.Raw) > 0 && it.Kind == protocol.ItemUnknown {
			iv.Raw = cut(string(it.Raw), max)
		}
	}
	return iv
}

func toolOf(tc *protocol.ToolCall, max int) *toolView {
	if tc == nil {
		return nil
	}
	tv := &toolView{ID: tc.ID, Title: tc.Title, Kind: tc.Kind, Status: tc.Status, Statuses: strings.Join(tc.Statuses, " → "),
		RawInput: cut(string(tc.RawInput), max), RawOutput: cut(string(tc.RawOutput), max)}
	for _, l := range tc.Locations {
		loc := l.Path
		if l.Line > 0 {
			loc += fmt.Sprintf(":%d", l.Line)
		}
		tv.Locations = append(tv.Locations, loc)
	}
	for _, c := range tc.Content {
		cv := contentView{Type: c.Type, Path: c.Path, TerminalID: c.TerminalID}
		switch c.Type {
		case "diff":
			cv.NewFile = !c.HasOld
			cv.Diff = lineDiff(cut(c.OldText, max), cut(c.NewText, max))
		case "content":
			if c.Block != nil {
				cv.Text = cut(c.Block.Summary(), max)
			}
		}
		tv.Content = append(tv.Content, cv)
	}
	return tv
}

func permissionOf(p *protocol.Permission) *permissionView {
	if p == nil {
		return nil
	}
	pv := &permissionView{Title: p.Title}
	for _, o := range p.Options {
		pv.Options = append(pv.Options, fmt.Sprintf("%s (%s)", firstOf(o.Name, o.ID), o.Kind))
	}
	switch {
	case p.Outcome == "":
		pv.Outcome = "unanswered"
	case p.Outcome == "error":
		pv.Outcome = "error: " + p.Error
	default:
		pv.Outcome = p.Outcome
		if o, ok := p.Chosen(); ok {
			pv.Outcome += ": " + firstOf(o.Name, o.ID)
		}
	}
	return pv
}

// callOf labels a request the agent made of the client.
func callOf(c *protocol.ClientCall) (string, string) {
	if c == nil {
		return "call", ""
	}
	text := c.Summary
	switch {
	case c.Error != "":
		text += " → error: " + c.Error
	case c.Result != "":
		text += " → " + c.Result
	}
	return c.Method, text
}
