// Package textdiff is the one line diff of acpscope: Myers' O(ND) edit
// script between two texts and its grouping into unified hunks with
// context, as diff -u prints them. The inspector's conversation and the
// HTML report both show an edit's change through it. It knows nothing of
// ACP.
package textdiff

import (
	"fmt"
	"strings"
)

// Kind says what a diff line does to the old text.
type Kind byte

const (
	Equal  Kind = ' '
	Delete Kind = '-'
	Insert Kind = '+'
)

// Op is one line of a diff. Lines keep their "\n", so a last line
// without one differs from the same line with one, as in diff(1).
type Op struct {
	Kind Kind
	Text string
}

// MaxEdits bounds the search: past this many inserted plus deleted lines
// (after the common ends are set aside) the middle is shown replaced as a
// whole. The search keeps O(D²) offsets (about 2 MB at 500), so this
// bounds its memory and time.
const MaxEdits = 500

// Lines splits text after each "\n"; concatenating the lines gives
// the text back.
func Lines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Script returns a shortest edit script that turns a into b (past
// MaxEdits changes, the middle replaced whole).
func Script(a, b []string) []Op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]Op, 0, len(a)+len(b)-pre-suf)
	for _, l := range a[:pre] {
		ops = append(ops, Op{Equal, l})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, Op{Equal, l})
	}
	return ops
}

// myers finds a shortest edit script. trace[d] holds, for each diagonal
// k in -d..d (at index k+d), the furthest x reached with d edits.
func myers(a, b []string) []Op {
	n, m := len(a), len(b)
	var trace [][]int
	for d := 0; d <= min(n+m, MaxEdits); d++ {
		v := make([]int, 2*d+1)
		for k := -d; k <= d; k += 2 {
			x := 0
			switch {
			case d == 0:
			case k == -d || k != d && trace[d-1][k-1+d-1] < trace[d-1][k+1+d-1]:
				x = trace[d-1][k+1+d-1] // down: insert b[y-1]
			default:
				x = trace[d-1][k-1+d-1] + 1 // right: delete a[x-1]
			}
			for x < n && x-k < m && a[x] == b[x-k] {
				x++
			}
			v[k+d] = x
			if x >= n && x-k >= m {
				return backtrack(a, b, append(trace, v))
			}
		}
		trace = append(trace, v)
	}
	return replaceAll(a, b)
}

// backtrack walks the trace back from (len(a), len(b)) to the start.
func backtrack(a, b []string, trace [][]int) []Op {
	var rev []Op
	x, y := len(a), len(b)
	for d := len(trace) - 1; d > 0; d-- {
		k := x - y
		prev := trace[d-1]
		var px int
		insert := k == -d || k != d && prev[k-1+d-1] < prev[k+1+d-1]
		if insert {
			px = prev[k+1+d-1]
		} else {
			px = prev[k-1+d-1]
		}
		// The snake: equal lines after the edit.
		start := px
		if !insert {
			start = px + 1
		}
		for x > start {
			x--
			y--
			rev = append(rev, Op{Equal, a[x]})
		}
		if insert {
			y--
			rev = append(rev, Op{Insert, b[y]})
		} else {
			x--
			rev = append(rev, Op{Delete, a[x]})
		}
	}
	for x > 0 { // the snake of d = 0
		x--
		rev = append(rev, Op{Equal, a[x]})
	}
	ops := make([]Op, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return ops
}

func replaceAll(a, b []string) []Op {
	ops := make([]Op, 0, len(a)+len(b))
	for _, l := range a {
		ops = append(ops, Op{Delete, l})
	}
	for _, l := range b {
		ops = append(ops, Op{Insert, l})
	}
	return ops
}

// Hunk is a run of changes with their context, as in diff -u. A start is
// 1-based; a range of length 0 starts at the line before it.
type Hunk struct {
	OldStart, OldLen int
	NewStart, NewLen int
	Ops              []Op
}

// Header is the hunk's @@ line.
func (h Hunk) Header() string {
	return fmt.Sprintf("@@ -%s +%s @@", hunkRange(h.OldStart, h.OldLen), hunkRange(h.NewStart, h.NewLen))
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// Unified groups ops into hunks with context equal lines around each
// change; changes closer than 2×context share a hunk.
func Unified(ops []Op, context int) []Hunk {
	var hunks []Hunk
	i := 0
	oldLine, newLine := 0, 0 // lines of each side before ops[i]
	for i < len(ops) {
		if ops[i].Kind == Equal {
			i, oldLine, newLine = i+1, oldLine+1, newLine+1
			continue
		}
		lead := 0
		for lead < context && i-lead-1 >= 0 && ops[i-lead-1].Kind == Equal {
			lead++
		}
		h := Hunk{OldStart: oldLine - lead, NewStart: newLine - lead}
		j := i - lead
		end := i // one past the last change of the hunk
		for {
			for end < len(ops) && ops[end].Kind != Equal {
				end++
			}
			gap := end
			for gap < len(ops) && ops[gap].Kind == Equal {
				gap++
			}
			if gap == len(ops) || gap-end > 2*context {
				break
			}
			end = gap
		}
		stop := min(end+context, len(ops))
		for _, op := range ops[j:stop] {
			switch op.Kind {
			case Equal:
				h.OldLen++
				h.NewLen++
			case Delete:
				h.OldLen++
			case Insert:
				h.NewLen++
			}
		}
		h.Ops = ops[j:stop]
		if h.OldLen > 0 {
			h.OldStart++
		}
		if h.NewLen > 0 {
			h.NewStart++
		}
		hunks = append(hunks, h)
		for _, op := range ops[i:stop] {
			if op.Kind != Insert {
				oldLine++
			}
			if op.Kind != Delete {
				newLine++
			}
		}
		i = stop
	}
	return hunks
}

// Diff is the unified hunks, with context lines of context, that turn
// old into new.
func Diff(oldText, newText string, context int) []Hunk {
	return Unified(Script(Lines(oldText), Lines(newText)), context)
}
