package inspector

import (
	"fmt"
	"strings"
)

// This file is a line diff (Myers' O(ND) algorithm) and its grouping into
// unified hunks, so an edit shows what changed with a little context
// instead of the whole old file and the whole new one.

// opKind says what a diff line does to the old text.
type opKind byte

const (
	opEqual  opKind = ' '
	opDelete opKind = '-'
	opInsert opKind = '+'
)

// lineOp is one line of a diff. Lines keep their "\n", so a last line
// without one differs from the same line with one, as in diff(1).
type lineOp struct {
	kind opKind
	text string
}

// maxEdits bounds the search: past this many inserted plus deleted lines
// (after the common ends are set aside) the middle is shown replaced as a
// whole. The search keeps O(D²) offsets (about 2 MB at 500), so this
// bounds its memory and time.
const maxEdits = 500

// splitLines splits text after each "\n"; concatenating the lines gives
// the text back.
func splitLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns the edit script that turns a into b.
func diffLines(a, b []string) []lineOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]lineOp, 0, len(a)+len(b)-pre-suf)
	for _, l := range a[:pre] {
		ops = append(ops, lineOp{opEqual, l})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, lineOp{opEqual, l})
	}
	return ops
}

// myers finds a shortest edit script. trace[d] holds, for each diagonal
// k in -d..d (at index k+d), the furthest x reached with d edits.
func myers(a, b []string) []lineOp {
	n, m := len(a), len(b)
	var trace [][]int
	for d := 0; d <= min(n+m, maxEdits); d++ {
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
func backtrack(a, b []string, trace [][]int) []lineOp {
	var rev []lineOp
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
			rev = append(rev, lineOp{opEqual, a[x]})
		}
		if insert {
			y--
			rev = append(rev, lineOp{opInsert, b[y]})
		} else {
			x--
			rev = append(rev, lineOp{opDelete, a[x]})
		}
	}
	for x > 0 { // the snake of d = 0
		x--
		rev = append(rev, lineOp{opEqual, a[x]})
	}
	ops := make([]lineOp, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return ops
}

func replaceAll(a, b []string) []lineOp {
	ops := make([]lineOp, 0, len(a)+len(b))
	for _, l := range a {
		ops = append(ops, lineOp{opDelete, l})
	}
	for _, l := range b {
		ops = append(ops, lineOp{opInsert, l})
	}
	return ops
}

// hunk is a run of changes with their context, as in diff -u. A start is
// 1-based; a range of length 0 starts at the line before it.
type hunk struct {
	oldStart, oldLen int
	newStart, newLen int
	ops              []lineOp
}

func (h hunk) header() string {
	return fmt.Sprintf("@@ -%s +%s @@", hunkRange(h.oldStart, h.oldLen), hunkRange(h.newStart, h.newLen))
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// unifiedHunks groups ops into hunks with context equal lines around each
// change; changes closer than 2×context share a hunk.
func unifiedHunks(ops []lineOp, context int) []hunk {
	var hunks []hunk
	i := 0
	oldLine, newLine := 0, 0 // lines of each side before ops[i]
	for i < len(ops) {
		if ops[i].kind == opEqual {
			i, oldLine, newLine = i+1, oldLine+1, newLine+1
			continue
		}
		lead := 0
		for lead < context && i-lead-1 >= 0 && ops[i-lead-1].kind == opEqual {
			lead++
		}
		h := hunk{oldStart: oldLine - lead, newStart: newLine - lead}
		j := i - lead
		end := i // one past the last change of the hunk
		for {
			for end < len(ops) && ops[end].kind != opEqual {
				end++
			}
			gap := end
			for gap < len(ops) && ops[gap].kind == opEqual {
				gap++
			}
			if gap == len(ops) || gap-end > 2*context {
				break
			}
			end = gap
		}
		stop := min(end+context, len(ops))
		for _, op := range ops[j:stop] {
			switch op.kind {
			case opEqual:
				h.oldLen++
				h.newLen++
			case opDelete:
				h.oldLen++
			case opInsert:
				h.newLen++
			}
		}
		h.ops = ops[j:stop]
		if h.oldLen > 0 {
			h.oldStart++
		}
		if h.newLen > 0 {
			h.newStart++
		}
		hunks = append(hunks, h)
		for _, op := range ops[i:stop] {
			if op.kind != opInsert {
				oldLine++
			}
			if op.kind != opDelete {
				newLine++
			}
		}
		i = stop
	}
	return hunks
}

// applyHunks patches old with hunks as patch(1) would, checking every
// context and removed line; it is how the tests know a diff is right.
func applyHunks(old []string, hunks []hunk) ([]string, error) {
	var out []string
	at := 0 // next line of old to copy
	for _, h := range hunks {
		start := h.oldStart - 1
		if h.oldLen == 0 {
			start = h.oldStart
		}
		if start < at || start > len(old) {
			return nil, fmt.Errorf("hunk %s starts at line %d, outside %d..%d", h.header(), start+1, at+1, len(old))
		}
		out = append(out, old[at:start]...)
		at = start
		for _, op := range h.ops {
			switch op.kind {
			case opEqual, opDelete:
				if at >= len(old) || old[at] != op.text {
					return nil, fmt.Errorf("hunk %s: line %d does not match %q", h.header(), at+1, op.text)
				}
				at++
				if op.kind == opEqual {
					out = append(out, op.text)
				}
			case opInsert:
				out = append(out, op.text)
			}
		}
	}
	return append(out, old[at:]...), nil
}
