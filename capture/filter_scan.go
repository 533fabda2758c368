package capture

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ScanMatches runs f over the records from..to of src (to 0: up to the
// end), in order, calling fn with each record (without its body) and
// whether f matched it, until fn returns false. A nil f matches all.
//
// On a *Reader, each segment's records and bodies are read once, in one
// read transaction, instead of one transaction per body: a filter with a
// text term over a million records runs several times faster. Other
// sources are read with Scan and Body. fn may call src.
func ScanMatches(src Source, f *Filter, from, to uint64, fn func(r *Record, matched bool) bool) error {
	if from == 0 {
		from = 1
	}
	if r, ok := src.(*Reader); ok {
		return r.scanMatches(f, from, to, fn)
	}
	return src.Scan(from, func(r *Record) bool {
		if to != 0 && r.Seq > to {
			return false
		}
		seq := r.Seq
		return fn(r, f.MatchIn(src, r, func() []byte { b, _ := src.Body(seq); return b }))
	})
}

// releaseEvery bounds how much of the mapped file a body scan keeps
// resident before releasing it.
const releaseEvery = 32 << 20

func (r *Reader) scanMatches(f *Filter, from, to uint64, fn func(*Record, bool) bool) (err error) {
	defer r.guard(&err)()
	if to == 0 || to > r.last {
		to = r.last
	}
	needBodies := f.NeedsBody()
	var touched int64 // body bytes read since the mapped pages were last released
	for from <= to {
		if touched > releaseEvery {
			r.releaseMapped()
			touched = 0
		}
		var next uint64
		stop := false
		err := r.db.View(func(tx *bolt.Tx) error {
			seg, err := findSegment(tx, from, true)
			if err != nil || seg == nil {
				stop = seg == nil
				return err
			}
			var all []byte
			if needBodies {
				all, _ = segmentBodies(tx, seg.first)
				touched += int64(len(all))
				if int64(len(all)) != seg.offsets[len(seg.offsets)-1] {
					return fmt.Errorf("segment %d: bodies hold %d bytes, metadata says %d: %w", seg.first, len(all), seg.offsets[len(seg.offsets)-1], errSegment)
				}
			}
			end := seg.first + uint64(len(seg.recs))
			for seq := max(from, seg.first); seq < end && seq <= to; seq++ {
				rec := seg.record(seq)
				i := seq - seg.first
				// The body is a view into the mapped file, valid for this
				// transaction; Match keeps no reference to it.
				body := func() []byte {
					if all == nil {
						return nil
					}
					return all[seg.offsets[i]:seg.offsets[i+1]:seg.offsets[i+1]]
				}
				if !fn(&rec, f.MatchIn(r, &rec, body)) {
					stop = true
					return nil
				}
			}
			next = end
			return nil
		})
		if err != nil {
			return fmt.Errorf("filtering %s: %w", r.path, err)
		}
		if stop {
			return nil
		}
		from = next
	}
	return nil
}
