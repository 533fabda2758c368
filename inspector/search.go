package inspector

import (
	"fmt"
	"sort"

	"github.com/acpscope/acpscope/capture"
)

// search is a search expression (the filter language) and the records it
// matches. The matches are counted once, on a worker, so n and N move
// between them at once and the status bar can say "3/17"; records that
// arrive later in a live capture are counted when n or N needs them.
type search struct {
	f       *capture.Filter
	matches []uint64 // matching sequences up to upTo, ascending
	upTo    uint64
	counted bool // matches holds every record up to upTo

	// hits are the matches the view shows, kept until the view changes.
	hits    []uint64
	hitsGen int
	hitsLen int
}

// Source returns the expression typed, "" for no search.
func (s *search) Source() string {
	if s == nil {
		return ""
	}
	return s.f.Source()
}

// startSearch remembers a search expression, counts its matches and
// moves to the first one after the selection.
func (cv *captureView) startSearch(text string) {
	f, err := capture.ParseFilter(text)
	if err != nil {
		cv.message = err.Error()
		return
	}
	cv.searchJob.stop()
	if f.Empty() {
		cv.search = nil
		return
	}
	cv.search = &search{f: f, hitsGen: -1}
	cv.findNext(1)
}

// findNext moves to the next (dir 1) or previous (dir -1) match in the
// view, wrapping around; it counts records not yet searched first.
func (cv *captureView) findNext(dir int) {
	s := cv.search
	if s == nil {
		cv.message = "no search yet: / starts one"
		return
	}
	if s.counted && cv.src.Last() <= s.upTo {
		cv.moveToMatch(dir)
		return
	}
	cv.searchJob.stop()
	src, from, last := cv.src, s.upTo+1, cv.src.Last()
	cv.filtering = "searching…"
	cv.searchJob = cv.a.start(func(j *job) { // search counter
		seqs, ok, err := matchRange(j, src, s.f, from, last, func(done, total uint64) {
			j.post(func() { cv.filtering = fmt.Sprintf("searching… %d%%", done*100/max(total, 1)) })
		})
		if !ok {
			return
		}
		j.post(func() {
			cv.filtering = ""
			if err != nil {
				cv.message = "search stopped: " + err.Error()
				return
			}
			s.matches = append(s.matches, seqs...)
			s.upTo, s.counted = max(last, s.upTo), true
			if cv.search == s {
				cv.moveToMatch(dir)
			}
		})
	})
}

// moveToMatch selects the next or previous match in the view.
func (cv *captureView) moveToMatch(dir int) {
	hits := cv.searchHits()
	if len(hits) == 0 {
		cv.message = "not found: " + cv.search.Source()
		if cv.filter != nil || cv.markedOnly {
			cv.message += " among the rows shown"
		}
		return
	}
	cur := cv.rows.seqAt(cv.selected())
	i := sort.Search(len(hits), func(i int) bool { return hits[i] > cur })
	if dir < 0 {
		i = sort.Search(len(hits), func(i int) bool { return hits[i] >= cur }) - 1
	}
	wrapped := i < 0 || i >= len(hits)
	i = (i + len(hits)) % len(hits)
	idx, _ := cv.rows.indexOf(hits[i])
	cv.selectIndex(idx)
	cv.message = ""
	if wrapped {
		cv.message = fmt.Sprintf("search wrapped to the %s", map[bool]string{true: "top", false: "bottom"}[dir > 0])
	}
}

// searchHits returns the search's matches among the rows shown: all of
// them, or those the filter (or the marks) let through.
func (cv *captureView) searchHits() []uint64 {
	s := cv.search
	if s.hitsGen == cv.rows.gen && s.hitsLen == len(s.matches) {
		return s.hits
	}
	s.hitsGen, s.hitsLen = cv.rows.gen, len(s.matches)
	s.hits = s.hits[:0]
	for _, seq := range s.matches {
		if _, ok := cv.rows.indexOf(seq); ok {
			s.hits = append(s.hits, seq)
		}
	}
	return s.hits
}

// seqIndex finds seq in ascending seqs.
func seqIndex(seqs []uint64, seq uint64) (int, bool) {
	i := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= seq })
	return i, i < len(seqs) && seqs[i] == seq
}
