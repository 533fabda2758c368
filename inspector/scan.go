package inspector

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// A filter that reads bodies costs a store read per record; over a large
// finished capture it is split across readers of the same file, each with
// its own segment cache, one per core (at most maxScanners).
const (
	parallelMin = 50_000
	maxScanners = 4
)

// matchRange scans records from..last, calling progress now and then, and
// returns the matching sequences in order. ok is false when j stopped.
func matchRange(j *job, src capture.Source, f *capture.Filter, from, last uint64, progress func(done, total uint64)) (seqs []uint64, ok bool, err error) {
	n := min(runtime.NumCPU(), maxScanners)
	r, isReader := src.(*capture.Reader)
	if !f.NeedsBody() || !isReader || n < 2 || last < from || last-from < parallelMin {
		return matchPart(j, src, f, from, last, nil, progress)
	}
	var (
		done  atomic.Uint64
		wg    sync.WaitGroup
		parts = make([][]uint64, n)
		errs  = make([]error, n)
		span  = (last - from + 1 + uint64(n) - 1) / uint64(n)
	)
	for i := 0; i < n; i++ {
		lo, hi := from+uint64(i)*span, min(from+uint64(i+1)*span-1, last)
		wg.Add(1)
		go func() { // filter scanner i, joined below
			defer wg.Done()
			part := src
			if i > 0 {
				other, err := capture.Open(r.Path())
				if err != nil {
					errs[i] = err
					return
				}
				defer other.Close()
				part = other
			}
			var report func(done, total uint64)
			if i == 0 {
				report = func(uint64, uint64) { progress(done.Load(), last-from+1) }
			}
			parts[i], _, errs[i] = matchPart(j, part, f, lo, hi, &done, report)
		}()
	}
	wg.Wait()
	if j.stopped() {
		return nil, false, nil
	}
	for i := range parts {
		if errs[i] != nil && err == nil {
			err = errs[i]
		}
		seqs = append(seqs, parts[i]...)
	}
	return seqs, true, err
}

// matchPart scans from..last of one source; counted adds up the records
// seen across parallel parts.
func matchPart(j *job, src capture.Source, f *capture.Filter, from, last uint64, counted *atomic.Uint64, progress func(done, total uint64)) (seqs []uint64, ok bool, err error) {
	lastReport := time.Now()
	seen := uint64(0)
	err = capture.ScanMatches(src, f, from, last, func(r *capture.Record, matched bool) bool {
		seen++
		if seen%1024 == 0 {
			if counted != nil {
				counted.Add(1024)
			}
			if j.stopped() {
				return false
			}
			if progress != nil && time.Since(lastReport) > progressEvery {
				lastReport = time.Now()
				progress(r.Seq-from, last-from+1)
			}
		}
		if matched {
			seqs = append(seqs, r.Seq)
		}
		return true
	})
	if j.stopped() {
		return nil, false, nil
	}
	return seqs, true, err
}
