package report

import (
	"strconv"
	"strings"
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

// maxDiffCells bounds the table the line diff fills (old lines × new
// lines); past it the old text is shown removed and the new one added.
const maxDiffCells = 4 << 20

// lineDiff returns the unified diff of two texts, as a tool call's edit
// shows them.
func lineDiff(old, new string) []diffLine {
	a, b := splitLines(old), splitLines(new)
	ops := editScript(a, b)
	return hunks(ops)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// editScript aligns a and b by their longest common subsequence.
func editScript(a, b []string) []diffLine {
	if len(a)*len(b) > maxDiffCells {
		var out []diffLine
		for _, l := range a {
			out = append(out, diffLine{"-", l})
		}
		for _, l := range b {
			out = append(out, diffLine{"+", l})
		}
		return out
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, diffLine{" ", a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, diffLine{"-", a[i]}) // removals first, as diff prints them
			i++
		default:
			out = append(out, diffLine{"+", b[j]})
			j++
		}
	}
	return out
}

// hunks keeps the changes with diffContext lines around each, under
// "@@ -l,n +l,n @@" headers.
func hunks(ops []diffLine) []diffLine {
	var out []diffLine
	// oldAt and newAt are the line numbers (from 1) each op starts at.
	oldAt, newAt := make([]int, len(ops)+1), make([]int, len(ops)+1)
	oldAt[0], newAt[0] = 1, 1
	for k, op := range ops {
		oldAt[k+1], newAt[k+1] = oldAt[k], newAt[k]
		if op.Op != "+" {
			oldAt[k+1]++
		}
		if op.Op != "-" {
			newAt[k+1]++
		}
	}
	for k := 0; k < len(ops); {
		if ops[k].Op == " " {
			k++
			continue
		}
		start := max(0, k-diffContext)
		end := k
		for end < len(ops) {
			if ops[end].Op != " " {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].Op == " " {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(len(ops), end+diffContext)
				break
			}
			end = run
		}
		out = append(out, diffLine{"@", hunkHeader(ops[start:end], oldAt[start], newAt[start])})
		out = append(out, ops[start:end]...)
		k = end
	}
	return out
}

func hunkHeader(ops []diffLine, oldStart, newStart int) string {
	var o, n int
	for _, op := range ops {
		if op.Op != "+" {
			o++
		}
		if op.Op != "-" {
			n++
		}
	}
	return "@@ -" + span(oldStart, o) + " +" + span(newStart, n) + " @@"
}

func span(start, n int) string {
	if n == 0 {
		start--
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}
