package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The request-id indexes (idx-id-client, idx-id-agent) are not posting
// lists keyed by term like idx-method and idx-session. Nearly every
// request has an id of its own, so one key per distinct term per commit
// meant one bbolt Put per request, at random places in the tree: request
// traffic ran at under 100k records/s, a fifth of plain notifications.
// Ids are therefore hashed into idBuckets buckets, and each commit adds
// at most one value per bucket:
//
//	key   = 8-byte big-endian first seq of the commit, bucket byte
//	value = entries in seq order: uvarint term length, term bytes,
//	        uvarint seq minus the previous entry's seq (the first: minus
//	        the key's seq)
//
// The commit seq comes first so that a commit appends its keys at the
// end of the tree, to one or two leaves. Formats 1 and 2 put the bucket
// byte first, and each commit then rewrote a leaf in each of up to 64
// places: at a thousand records per commit that was half the commit's
// CPU time. The price is paid by lookups: bbolt keeps values in the leaf
// pages, so a lookup reads the whole index, though it decodes only the
// values of the term's bucket (1/idBuckets of all ids) and keeps the
// entries whose term matches. Writing happens on every commit of every
// capture; lookups are rare and read a file that is already on disk.
const idBuckets = 64

// idBucket returns the bucket of a term: FNV-1a, stable across
// processes and versions (maphash seeds are not).
func idBucket(term string) byte {
	h := uint32(2166136261)
	for i := 0; i < len(term); i++ {
		h ^= uint32(term[i])
		h *= 16777619
	}
	return byte(h % idBuckets)
}

// idPostings accumulates one commit's entries for one id index.
type idPostings struct {
	vals [idBuckets][]byte
	prev [idBuckets]uint64
	used []byte // buckets with entries, in first-use order
}

func (p *idPostings) add(first uint64, term string, seq uint64) {
	bk := idBucket(term)
	v := p.vals[bk]
	if len(v) == 0 {
		p.prev[bk] = first
		p.used = append(p.used, bk)
	}
	v = binary.AppendUvarint(v, uint64(len(term)))
	v = append(v, term...)
	v = binary.AppendUvarint(v, seq-p.prev[bk])
	p.prev[bk] = seq
	p.vals[bk] = v
}

func (p *idPostings) reset() {
	for _, bk := range p.used {
		p.vals[bk] = p.vals[bk][:0]
	}
	p.used = p.used[:0]
}

// put stores the commit's entries.
func (p *idPostings) put(b *bolt.Bucket, first uint64) error {
	for _, bk := range p.used {
		k := append(binary.BigEndian.AppendUint64(make([]byte, 0, 9), first), bk)
		if err := b.Put(k, p.vals[bk]); err != nil {
			return err
		}
	}
	return nil
}

// lookupID collects the seqs stored for term in an id index bucket of a
// capture of the given format.
func lookupID(b *bolt.Bucket, term string, format int) (seqs []uint64, err error) {
	bk := idBucket(term)
	c := b.Cursor()
	if format < seqFirstIDs { // bucket byte first: the term's keys are adjacent
		for k, v := c.Seek([]byte{bk}); k != nil && k[0] == bk; k, v = c.Next() {
			if seqs, err = idEntries(seqs, k, 1, v, term); err != nil {
				return nil, err
			}
		}
		return seqs, nil
	}
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) == 9 && k[8] != bk {
			continue
		}
		if seqs, err = idEntries(seqs, k, 0, v, term); err != nil {
			return nil, err
		}
	}
	return seqs, nil
}

// idEntries appends the seqs of term's entries in value v of key k, whose
// 8-byte commit seq begins at k[at].
func idEntries(seqs []uint64, k []byte, at int, v []byte, term string) ([]uint64, error) {
	if len(k) != 9 {
		return nil, fmt.Errorf("id index key of %d bytes: %w", len(k), errSegment)
	}
	seq := binary.BigEndian.Uint64(k[at:])
	for len(v) > 0 {
		n, w := binary.Uvarint(v)
		if w <= 0 || n > uint64(len(v)-w) {
			return nil, fmt.Errorf("id index entry: %w", errSegment)
		}
		t := v[w : w+int(n)]
		v = v[w+int(n):]
		d, w2 := binary.Uvarint(v)
		if w2 <= 0 {
			return nil, fmt.Errorf("id index entry: %w", errSegment)
		}
		v = v[w2:]
		seq += d
		if bytes.Equal(t, []byte(term)) {
			seqs = append(seqs, seq)
		}
	}
	return seqs, nil
}
