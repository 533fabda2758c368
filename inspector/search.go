package inspector

import (
	"fmt"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// startSearch remembers a search expression (the filter language) and
// finds its first match after the selection.
func (cv *captureView) startSearch(text string) {
	f, err := capture.ParseFilter(text)
	if err != nil {
		cv.message = err.Error()
		return
	}
	if f.Empty() {
		cv.search = nil
		return
	}
	cv.search = f
	cv.findNext(1)
}

// findNext moves to the next (dir 1) or previous (dir -1) row matching the
// search, wrapping around, on a worker with progress.
func (cv *captureView) findNext(dir int) {
	if cv.search == nil {
		cv.message = "no search yet: / starts one"
		return
	}
	cv.searchJob.stop()
	f, start, total := cv.search, cv.selected(), cv.rows.total
	if total == 0 {
		return
	}
	// The worker reads sequences through a snapshot of the view: a copy
	// of the filter's slice header (appends never change earlier rows).
	seqs, all := cv.rows.seqs, cv.rows.seqs == nil
	seqAt := func(i int) uint64 {
		if all {
			return uint64(i + 1)
		}
		return seqs[i]
	}
	src := cv.src
	cv.filtering = "searching…"
	cv.searchJob = cv.a.start(func(j *job) { // search worker
		found, ok := -1, true
		if all && dir > 0 {
			found, ok = searchForward(j, src, f, start, total)
		}
		last := time.Now()
		for step := 1; step <= total && found < 0 && ok && !(all && dir > 0); step++ {
			i := ((start+dir*step)%total + total) % total
			if step%1024 == 0 {
				if j.stopped() {
					ok = false
					break
				}
				if time.Since(last) > progressEvery {
					last = time.Now()
					pct := step * 100 / total
					j.post(func() { cv.filtering = fmt.Sprintf("searching… %d%%", pct) })
				}
			}
			r, err := src.Record(seqAt(i))
			if err != nil {
				continue
			}
			seq := r.Seq
			if f.MatchIn(src, &r, func() []byte { b, _ := src.Body(seq); return b }) {
				found = i
				break
			}
		}
		if !ok {
			return
		}
		j.post(func() {
			cv.filtering = ""
			if found < 0 {
				cv.message = "not found: " + f.Source()
				return
			}
			wrapped := (dir > 0 && found <= start) || (dir < 0 && found >= start)
			cv.selectIndex(found)
			cv.message = "found: " + f.Source()
			if wrapped {
				cv.message += " (wrapped)"
			}
		})
	})
}

// searchForward finds the first record after row start matching f in the
// view of every record, wrapping around, reading the store segment by
// segment. It returns the row, or -1.
func searchForward(j *job, src capture.Source, f *capture.Filter, start, total int) (found int, ok bool) {
	found, ok = -1, true
	scan := func(from, to uint64) {
		capture.ScanMatches(src, f, from, to, func(r *capture.Record, matched bool) bool {
			if r.Seq%1024 == 0 && j.stopped() {
				ok = false
				return false
			}
			if matched {
				found = int(r.Seq - 1)
				return false
			}
			return true
		})
	}
	if start+2 <= total {
		scan(uint64(start+2), uint64(total))
	}
	if found < 0 && ok {
		scan(1, uint64(start+1))
	}
	return found, ok
}
