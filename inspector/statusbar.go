package inspector

import (
	"fmt"
	"strings"

	"github.com/rivo/tview"
)

// This file writes the capture view's status bar, which always says what
// the view is doing: which pane has the keys, the filter, the search and
// its position among the matches, and whether a live capture is followed
// and how many rows arrived below.

// stateText is the status bar's text for a screen width cells wide. The
// filter and search expressions are clipped so the rest stays on screen.
func (cv *captureView) stateText(width int) string {
	mode := " TABLE "
	switch {
	case cv.zoom:
		mode = " DETAIL full "
	case cv.detailFocus:
		mode = " DETAIL "
	}
	if cv.raw {
		mode += "raw "
	}
	left := []string{"[black:aqua]" + mode + "[-:-]"}
	if hold := cv.interceptText(width / 3); hold != "" {
		left = append(left, hold)
	}
	var right []string
	if f := cv.followText(); f != "" {
		right = append(right, f)
	}
	if cv.markedOnly {
		right = append(right, "[orange]marked only[-]")
	}
	if cv.rows.delta {
		right = append(right, "Δt")
	}
	// What is left is shared by the filter and the search expressions.
	used := tview.TaggedStringWidth(strings.Join(append(left, right...), "  "))
	fw, sw := shareRoom(max(width-used-2*3-len("filter: ")-len("/ 9999/9999"), 16),
		len([]rune(cv.filter.Source())), len([]rune(cv.search.Source())))
	filter := "[gray]no filter[-]"
	if cv.filter != nil {
		filter = "filter: [yellow::b]" + esc(clip(cv.filter.Source(), fw)) + "[-::-]"
	}
	segs := append(left, filter)
	if cv.search != nil {
		segs = append(segs, cv.searchText(sw))
	}
	return strings.Join(append(segs, right...), "  ")
}

// shareRoom splits room cells between a filter fw long and a search sw
// long: each gets what it needs when both fit, else the filter two thirds
// unless the search needs less.
func shareRoom(room, fw, sw int) (int, int) {
	switch {
	case fw+sw <= room:
		return fw, sw
	case sw <= room/3:
		return room - sw, sw
	case fw <= room*2/3:
		return fw, room - fw
	}
	return room * 2 / 3, room - room*2/3
}

// followText says whether a live capture is followed; it is empty for a
// finished one.
func (cv *captureView) followText() string {
	if !cv.live {
		return ""
	}
	atEnd := cv.selected() >= cv.rows.total-1
	news := ""
	if cv.newBelow > 0 {
		news = fmt.Sprintf(" [yellow::b]▼ %d new[-::-] (G)", cv.newBelow)
	}
	switch {
	case cv.follow && atEnd:
		return "[green]● following[-]"
	case cv.follow:
		return "follow paused" + news
	}
	return "follow off (F)" + news
}

// searchText is the search expression and where the selection is among
// its matches: "/error 3/17" on a match, "/error 17 found" off one.
func (cv *captureView) searchText(room int) string {
	s := cv.search
	text := "/" + esc(clip(s.f.Source(), max(room, 6)))
	if !s.counted {
		return text + " …"
	}
	hits := cv.searchHits()
	if len(hits) == 0 {
		return text + " [red]none[-]"
	}
	if i, ok := seqIndex(hits, cv.rows.seqAt(cv.selected())); ok {
		return fmt.Sprintf("%s [::b]%d/%d[::-]", text, i+1, len(hits))
	}
	return fmt.Sprintf("%s %d found", text, len(hits))
}

// hints are the keys worth knowing where the keys are now.
func (cv *captureView) hints() string {
	switch {
	case cv.barMode == "goto":
		return "Enter go to the message  Esc cancel"
	case cv.barMode == "intercept":
		return "Enter hold what this filter matches  Esc cancel  ? grammar"
	case cv.barMode != "":
		return "Enter apply  Esc cancel  ? grammar"
	case cv.detailFocus:
		return "↑↓ scroll  Tab table  Esc back  b raw  x expand  p pair  w save  y copy  ? help"
	}
	return "f filter  / search  : go to  p pair  l lint  c chat  s stats  ? help  Q quit"
}
