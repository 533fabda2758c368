package inspector

import (
	"fmt"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/textdiff"
	"github.com/acpscope/acpscope/protocol"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

const pageConversation = "conversation"

// largeTranscript is the message count above which the view says how to
// narrow it: the transcript holds every body it was built from.
const largeTranscript = 200_000

// conversation is the transcript page: one line per table row, each
// pointing at the messages it came from.
type conversation struct {
	table *tview.Table
	lines []convLine
	job   *job
}

// convLine is one rendered line and the first message behind it.
type convLine struct {
	text string
	seq  uint64
}

// loadMsgs reads the JSON-RPC records the filter lets through (all when
// f is nil) with their bodies, for the transcript.
func loadMsgs(j *job, src capture.Source, f *capture.Filter, progress func(done, total uint64)) ([]protocol.Msg, error) {
	var msgs []protocol.Msg
	last := src.Last()
	pace := j.pacer(progress)
	var bodyErr error
	err := src.Scan(1, func(r *capture.Record) bool {
		if !pace.tick(r.Seq, last) {
			return false
		}
		if !r.Kind.IsProtocol() {
			return true
		}
		seq := r.Seq
		if !f.MatchIn(src, r, func() []byte { b, _ := src.Body(seq); return b }) {
			return true
		}
		body, err := src.Body(r.Seq)
		if err != nil {
			bodyErr = err
			return true
		}
		m := r.Msg
		m.Body = body
		msgs = append(msgs, m)
		return true
	})
	if err == nil {
		err = bodyErr
	}
	return msgs, err
}

// transcriptLines renders a transcript to lines of at most width cells.
func transcriptLines(t *protocol.Transcript, width int) []convLine {
	w := &lineWriter{width: max(width, 20)}
	var about []string
	if t.Client != "" {
		about = append(about, "client "+esc(t.Client))
	}
	if t.Agent != "" {
		about = append(about, "agent "+esc(t.Agent))
	}
	if t.Version != 0 {
		about = append(about, fmt.Sprintf("protocol v%d", t.Version))
	}
	if len(about) > 0 {
		w.add(0, "[gray]%s[-]", strings.Join(about, " · "))
	}
	if len(t.Sessions) == 0 {
		w.add(0, "no ACP session in this capture")
	}
	defer w.fillSeqs()
	for _, s := range t.Sessions {
		title := ""
		if s.Title != "" {
			title = " — " + esc(s.Title)
		}
		w.add(first(s.Seqs), "[::b]session %s%s[::-] [gray](%s)[-]", esc(s.ID), title, s.Origin)
		for _, turn := range s.Turns {
			writeTurn(w, turn)
		}
	}
	return w.lines
}

func writeTurn(w *lineWriter, turn *protocol.Turn) {
	if turn.Index == 0 && len(turn.Items) == 0 {
		return
	}
	label := fmt.Sprintf("turn %d", turn.Index)
	if turn.Index == 0 {
		label = "before the first prompt"
	}
	if turn.Replayed {
		label += " (replayed by session/load)"
	}
	w.add(turn.PromptSeq, "[yellow]── %s ──[-]", label)
	if len(turn.Prompt) > 0 {
		var parts []string
		for _, b := range turn.Prompt {
			parts = append(parts, b.Summary())
		}
		w.wrap(turn.PromptSeq, "[green]▶ user:[-] ", strings.Join(parts, " "))
	}
	for _, it := range turn.Items {
		writeItem(w, it)
	}
	switch {
	case turn.Error != "":
		w.add(turn.EndSeq, "[red]■ error: %s[-]", esc(turn.Error))
	case turn.StopReason != "":
		color := "gray"
		if turn.StopReason != "end_turn" {
			color = "orange"
		}
		w.add(turn.EndSeq, "[%s]■ stop: %s[-]", color, esc(turn.StopReason))
	case turn.PromptSeq != 0:
		w.add(turn.PromptSeq, "[orange]■ no answer to the prompt yet[-]")
	}
	if turn.CancelSeq != 0 {
		w.add(turn.CancelSeq, "[orange]  (cancelled by the client)[-]")
	}
}

func writeItem(w *lineWriter, it *protocol.Item) {
	seq := first(it.Seqs)
	switch it.Kind {
	case protocol.ItemUser:
		w.wrap(seq, "[green]user:[-] ", it.Text)
	case protocol.ItemAgent:
		w.wrap(seq, "[aqua]agent:[-] ", it.Text)
	case protocol.ItemThought:
		w.wrap(seq, "[gray]thought:[-] ", it.Text)
	case protocol.ItemTool:
		writeTool(w, seq, it.Tool)
	case protocol.ItemPlan:
		w.add(seq, "[fuchsia]plan:[-]")
		if it.Plan != nil {
			for _, e := range it.Plan.Entries {
				w.wrap(seq, "  "+esc("["+e.Status+"]")+" ", e.Content)
			}
		}
	case protocol.ItemPermission:
		writePermission(w, seq, it.Permission)
	case protocol.ItemMCP:
		w.wrap(seq, "[blue]mcp:[-] ", it.MCP.Summary(120))
	case protocol.ItemCall:
		if c := it.Call; c != nil {
			line := fmt.Sprintf("%s %s", c.Method, c.Summary)
			if c.Error != "" {
				line += " → error: " + c.Error
			} else if c.Result != "" {
				line += " → " + c.Result
			}
			w.wrap(seq, "[blue]call:[-] ", line)
		}
	default:
		w.wrap(seq, fmt.Sprintf("[gray]%s %s:[-] ", it.Kind, esc(it.Update)), it.Summary)
	}
}

func writeTool(w *lineWriter, seq uint64, tc *protocol.ToolCall) {
	if tc == nil {
		return
	}
	status := strings.Join(tc.Statuses, "→")
	if status == "" {
		status = tc.Status
	}
	w.wrap(seq, "[orange]tool:[-] ", fmt.Sprintf("%s (%s) [%s]", tc.Title, tc.Kind, status))
	for _, c := range tc.Content {
		switch c.Type {
		case "diff":
			w.add(seq, "    [::b]diff %s[::-]", esc(c.Path))
			writeDiff(w, seq, c.OldText, c.NewText)
		case "terminal":
			w.add(seq, "    terminal %s", esc(c.TerminalID))
		default:
			if c.Block != nil {
				w.wrap(seq, "    ", c.Block.Summary())
			}
		}
	}
	for _, c := range tc.MCP {
		w.wrap(first(c.Seqs), "    [blue]mcp:[-] ", c.Summary(120))
	}
}

// diffMostLines bounds the lines one edit's diff takes in the transcript;
// Enter on it shows the whole message.
const diffMostLines = 40

// writeDiff shows an edit as a unified diff with 3 lines of context.
func writeDiff(w *lineWriter, seq uint64, oldText, newText string) {
	hunks := textdiff.Diff(oldText, newText, 3)
	if len(hunks) == 0 {
		w.add(seq, "    [gray](no change)[-]")
		return
	}
	// A missing final newline is worth a line only when the sides differ.
	eolDiffers := strings.HasSuffix(oldText, "\n") != strings.HasSuffix(newText, "\n")
	shown, total := 0, 0
	for _, h := range hunks {
		total += 1 + len(h.Ops)
	}
	for _, h := range hunks {
		if shown >= diffMostLines {
			break
		}
		w.add(seq, "    [aqua]%s[-]", h.Header())
		shown++
		for _, op := range h.Ops {
			if shown >= diffMostLines {
				break
			}
			writeDiffLine(w, seq, op, eolDiffers)
			shown++
		}
	}
	if total > shown {
		w.add(seq, "    [gray]… %d more diff lines; Enter shows the message[-]", total-shown)
	}
}

func writeDiffLine(w *lineWriter, seq uint64, op textdiff.Op, eolDiffers bool) {
	color := map[textdiff.Kind]string{textdiff.Equal: "-", textdiff.Delete: "red", textdiff.Insert: "green"}[op.Kind]
	text := strings.TrimSuffix(op.Text, "\n")
	text = strings.ReplaceAll(text, "\t", "    ")
	w.add(seq, "    [%s]%c%s[-]", color, op.Kind, esc(clip(printable([]byte(text)), w.width-5)))
	if eolDiffers && !strings.HasSuffix(op.Text, "\n") {
		w.add(seq, "    [gray]\\ no newline at end of file[-]")
	}
}

func writePermission(w *lineWriter, seq uint64, p *protocol.Permission) {
	if p == nil {
		return
	}
	var opts []string
	for _, o := range p.Options {
		opts = append(opts, fmt.Sprintf("%s (%s)", o.Name, o.Kind))
	}
	w.wrap(seq, "[yellow]permission:[-] ", p.Title+" — "+strings.Join(opts, ", "))
	switch chosen, ok := p.Chosen(); {
	case ok:
		w.add(seq, "    → chose [::b]%s[::-] (%s)", esc(chosen.Name), esc(chosen.Kind))
	case p.Outcome == "":
		w.add(seq, "    [orange]→ unanswered[-]")
	case p.Error != "":
		w.add(seq, "    [red]→ error: %s[-]", esc(p.Error))
	default:
		w.add(seq, "    → %s %s", esc(p.Outcome), esc(p.OptionID))
	}
}

// showConversation opens the transcript page, built on a worker.
func (cv *captureView) showConversation() {
	if cv.convo != nil {
		cv.convo.job.stop()
	}
	c := &conversation{table: tview.NewTable().SetSelectable(true, false)}
	title := " conversation (Enter jumps to the messages, Esc back) "
	if cv.filter != nil {
		title = " conversation of " + esc(cv.filter.Source()) + " (Enter jumps, Esc back) "
	}
	c.table.SetBorder(true).SetTitle(title)
	c.table.SetCell(0, 0, tview.NewTableCell("reading the capture…"))
	c.table.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch {
		case ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyRune && (ev.Rune() == 'q' || ev.Rune() == 'c'):
			c.job.stop()
			cv.a.pages.SwitchToPage(pageCapture)
			cv.a.tv.SetFocus(cv.table)
		case ev.Key() == tcell.KeyEnter:
			row, _ := c.table.GetSelection()
			if row < len(c.lines) && c.lines[row].seq != 0 {
				cv.a.pages.SwitchToPage(pageCapture)
				cv.a.tv.SetFocus(cv.table)
				seq := c.lines[row].seq
				cv.selectSeq(seq)
				cv.message = fmt.Sprintf("from the conversation: message #%d", seq)
			}
		case ev.Key() == tcell.KeyRune && ev.Rune() == 'j':
			return tcell.NewEventKey(tcell.KeyDown, 0, tcell.ModNone)
		case ev.Key() == tcell.KeyRune && ev.Rune() == 'k':
			return tcell.NewEventKey(tcell.KeyUp, 0, tcell.ModNone)
		default:
			return ev
		}
		return nil
	})
	cv.convo = c
	_, _, width, _ := cv.table.GetInnerRect()
	src, f := cv.src, cv.filter
	c.job = cv.a.start(func(j *job) { // transcript worker
		msgs, err := loadMsgs(j, src, f, func(done, total uint64) {
			j.post(func() {
				c.table.SetCell(0, 0, tview.NewTableCell(fmt.Sprintf("reading the capture… %d%%", done*100/max(total, 1))))
			})
		})
		if j.stopped() {
			return
		}
		lines := transcriptLines(protocol.BuildTranscript(msgs), width-2)
		if len(msgs) > largeTranscript && f == nil {
			lines = append([]convLine{{text: fmt.Sprintf("[yellow]%d messages held in memory for this view; a filter such as session:ID narrows it[-]", len(msgs))}}, lines...)
		}
		if err != nil {
			lines = append([]convLine{{text: "[red]" + esc(err.Error()) + "[-]"}}, lines...)
		}
		j.post(func() {
			c.lines = lines
			c.table.Clear()
			for i, l := range lines {
				c.table.SetCell(i, 0, tview.NewTableCell(l.text).SetExpansion(1))
			}
			c.table.Select(0, 0)
			c.table.ScrollToBeginning()
		})
	})
	cv.a.pages.AddAndSwitchToPage(pageConversation, c.table, true)
	cv.a.tv.SetFocus(c.table)
}
