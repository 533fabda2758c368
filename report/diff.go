package report

import (
	"strings"

	"github.com/acpscope/acpscope/internal/textdiff"
)

// diffLine is one line of a unified diff: Op is " ", "+", "-", or "@"
// for a hunk header (whose Text holds the whole header).
type diffLine struct {
	Op   string
	Text string
}

// Class names the line's style.
func (d diffLine) Class() string {
	switch d.Op {
	case "+":
		return "add"
	case "-":
		return "del"
	case "@":
		return "hunk"
	}
	return "ctx"
}

// Line is the line as a unified diff prints it.
func (d diffLine) Line() string {
	if d.Op == "@" {
		return d.Text
	}
	return d.Op + d.Text
}

// diffContext is how many unchanged lines a hunk keeps around a change.
const diffContext = 3

// lineDiff returns the unified diff of two texts, as a tool call's edit
// shows them: each hunk's @@ header, then its lines.
func lineDiff(old, new string) []diffLine {
	var out []diffLine
	for _, h := range textdiff.Diff(old, new, diffContext) {
		out = append(out, diffLine{"@", h.Header()})
		for _, op := range h.Ops {
			out = append(out, diffLine{string(op.Kind), strings.TrimSuffix(op.Text, "\n")})
		}
	}
	return out
}
