package inspector

import (
	"fmt"
	"strings"

	"github.com/rivo/tview"
)

// This file lays transcript text out in lines for the conversation table.

func first(seqs []uint64) uint64 {
	if len(seqs) == 0 {
		return 0
	}
	return seqs[0]
}

func esc(s string) string { return tview.Escape(s) }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 1 {
		return s
	}
	return string(r[:n-1]) + "…"
}

// lineWriter collects rendered lines with their message references.
type lineWriter struct {
	width int
	lines []convLine
}

func (w *lineWriter) add(seq uint64, format string, args ...any) {
	w.lines = append(w.lines, convLine{text: fmt.Sprintf(format, args...), seq: seq})
}

// fillSeqs points lines that came from no message (headings) at the
// next line that did, so Enter works anywhere.
func (w *lineWriter) fillSeqs() {
	next := uint64(0)
	for i := len(w.lines) - 1; i >= 0; i-- {
		if w.lines[i].seq == 0 {
			w.lines[i].seq = next
		} else {
			next = w.lines[i].seq
		}
	}
}

// wrap writes prefix (already tagged) and text (plain) over as many lines
// as the width needs, indenting continuation lines.
func (w *lineWriter) wrap(seq uint64, prefix, text string) {
	text = strings.ReplaceAll(text, "\t", "    ")
	plainPrefix := tview.TaggedStringWidth(prefix)
	room := max(w.width-plainPrefix, 10)
	lines := wrapText(text, room)
	for i, l := range lines {
		if i == 0 {
			w.lines = append(w.lines, convLine{text: prefix + esc(l), seq: seq})
		} else {
			w.lines = append(w.lines, convLine{text: strings.Repeat(" ", plainPrefix) + esc(l), seq: seq})
		}
	}
}

// wrapText breaks text into lines of at most n runes, at spaces where it
// can, keeping the text's own line breaks.
func wrapText(text string, n int) []string {
	var out []string
	for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		r := []rune(para)
		if len(r) == 0 {
			out = append(out, "")
			continue
		}
		for len(r) > n {
			cut := n
			for i := n; i > 0; i-- {
				if r[i] == ' ' {
					cut = i
					break
				}
			}
			out = append(out, string(r[:cut]))
			r = r[cut:]
			if len(r) > 0 && r[0] == ' ' {
				r = r[1:]
			}
		}
		out = append(out, string(r))
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}
