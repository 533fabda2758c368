package inspector

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/acpscope/acpscope/internal/human"
	"github.com/rivo/tview"
)

// This file lays the library's captures out in aligned columns under a
// header, whatever the agent names' lengths: the agent column takes what
// the others leave of the width, and long names end in an ellipsis.

// libCols are the column widths of one layout.
type libCols struct {
	agent, msgs int
}

// Fixed widths: start time, duration, size and state; lint and loss
// follow the state.
const (
	libStartW   = 12 // "Jan 02 15:04", or "Jan 02  2025" for old captures
	libDurW     = 8
	libSizeW    = 9
	libStateW   = 8
	libAgentMin = 8
	libAgentMax = 32
	// libIndent is what the tree draws before a capture's line.
	libIndent = 3
)

// layoutCols fits the columns in width cells.
func layoutCols(entries []libEntry, width int) libCols {
	c := libCols{agent: len("agent"), msgs: len("msgs")}
	for i := range entries {
		c.agent = max(c.agent, tview.TaggedStringWidth(esc(entries[i].Meta.Agent)))
		c.msgs = max(c.msgs, len(strconv.FormatUint(entries[i].Messages, 10)))
	}
	others := libIndent + libStartW + libDurW + c.msgs + libSizeW + libStateW + len("lint 99") + 6*2
	c.agent = max(min(c.agent, width-others, libAgentMax), libAgentMin)
	return c
}

// libHeader names the columns above the captures.
func libHeader(c libCols) string {
	return fmt.Sprintf("[yellow::b]%*s%-*s  %-*s  %*s  %*s  %*s  %-*s  %s[-::-]", libIndent, "",
		libStartW, "started", c.agent, "agent", libDurW, "duration", c.msgs, "msgs", libSizeW, "size", libStateW, "state", "lint")
}

// captureLine is one capture in the list.
func captureLine(e *libEntry, c libCols, now time.Time) string {
	if e.Err != nil {
		return fmt.Sprintf("%s  [red]unreadable: %s[-]", esc(filepath.Base(e.Path)), esc(e.Err.Error()))
	}
	m := e.Meta
	agent := m.Agent
	if agent == "" {
		agent = "?"
	}
	s := fmt.Sprintf("%-*s  [::b]%s[::-]  %*s  %*d  %*s  %s", libStartW, startText(m.Start, now),
		esc(pad(clip(agent, c.agent), c.agent)), libDurW, durText(e, now), c.msgs, e.Messages,
		libSizeW, human.Size(e.Size), stateText(e))
	switch {
	case e.Findings > 0:
		s += fmt.Sprintf("  [yellow]lint %d[-]", e.Findings)
	case e.Findings == 0:
		s += "  [gray]clean[-]"
	}
	if m.Loss.Messages > 0 || m.Loss.Bytes > 0 {
		s += fmt.Sprintf("  [red]lost %d msgs[-]", m.Loss.Messages)
	}
	return s
}

// startText writes a start time as ls -l does: the time of day within
// half a year, the year beyond.
func startText(t, now time.Time) string {
	if t.IsZero() {
		return "?"
	}
	t = t.Local()
	if now.Sub(t) > 182*human.Day || t.Sub(now) > human.Day {
		return t.Format("Jan _2  2006")
	}
	return t.Format("Jan _2 15:04")
}

func durText(e *libEntry, now time.Time) string {
	m := e.Meta
	switch {
	case !m.End.IsZero():
		return human.Duration(m.End.Sub(m.Start))
	case e.Live:
		return human.Duration(now.Sub(m.Start)) + "…"
	case !e.last.IsZero() && e.last.After(m.Start):
		return "≥" + human.Duration(e.last.Sub(m.Start)) // ran at least until its last record
	}
	return "?"
}

// stateText says, in libStateW cells, whether the capture is live and how
// it ended.
func stateText(e *libEntry) string {
	m := e.Meta
	s, color := "finished", ""
	switch {
	case e.Live:
		s, color = "● live", "green"
	case e.unclean():
		s, color = "unclean", "orange"
	case m.Exit == nil:
	case m.Exit.Error != "":
		s, color = "failed", "red"
	case m.Exit.Signal != "":
		s, color = m.Exit.Signal, "red"
	case m.Exit.Code != 0:
		s, color = "exit "+strconv.Itoa(m.Exit.Code), "red"
	default:
		s = "exit 0"
	}
	s = pad(s, libStateW)
	if color != "" {
		s = "[" + color + "]" + s + "[-]"
	}
	return s
}
