package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Count returns how many records the file holds. It is Last less the
// records of commits that failed (the proxy said so and moved on, leaving
// a hole in the sequence), read from each segment's record count, so it
// touches one page per segment and no bodies.
func (r *Reader) Count() (n uint64, err error) {
	defer r.guard(&err)()
	err = r.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketMsgs).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				continue
			}
			if len(v) < 2 || !isSegVersion(v[0]) {
				return fmt.Errorf("segment %d: %w", binary.BigEndian.Uint64(k), errSegment)
			}
			count, size := binary.Uvarint(v[1:])
			if size <= 0 {
				return fmt.Errorf("segment %d: bad record count: %w", binary.BigEndian.Uint64(k), errSegment)
			}
			n += count
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("counting the records of %s: %w", r.path, err)
	}
	return n, nil
}

// LastTime returns when the last record was received; the zero time for
// an empty capture. For a capture its proxy never finished (killed), it
// is as far as the capture is known to reach.
func (r *Reader) LastTime() (time.Time, error) {
	if r.last == 0 {
		return time.Time{}, nil
	}
	rec, err := r.Record(r.last)
	if errors.Is(err, ErrNoRecord) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return rec.When(), nil
}
