package capture

import (
	"encoding/binary"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// The pairs bucket tells a request which response answered it (a
// response learns its request when it is recorded, but the request was
// stored earlier). One Put per response cost a fifth of the writer's time
// on request traffic, so pairs are grouped by blocks of pairBlock request
// seqs, one value per block and commit:
//
//	key   = 8-byte block (request seq with the low bits cleared),
//	        8-byte first seq of the commit
//	value = per pair: uvarint request seq - block,
//	        uvarint response seq - request seq
//
// A reader collects a segment's pairs by seeking to each block it spans.
const pairBlock = 256

// putPairs stores a group's (request, response) pairs.
func putPairs(b *bolt.Bucket, first uint64, pairs [][2]uint64) error {
	slices.SortFunc(pairs, func(x, y [2]uint64) int {
		return cmpUint(x[0], y[0])
	})
	var v []byte
	for i, p := range pairs {
		block := p[0] &^ (pairBlock - 1)
		v = binary.AppendUvarint(v, p[0]-block)
		v = binary.AppendUvarint(v, p[1]-p[0])
		if i+1 == len(pairs) || pairs[i+1][0]&^(pairBlock-1) != block {
			k := binary.BigEndian.AppendUint64(seqKey(block), first)
			if err := b.Put(k, v); err != nil {
				return err
			}
			v = nil
		}
	}
	return nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fillPeers gives the segment's requests the seq of their response.
func fillPeers(tx *bolt.Tx, seg *segment) {
	c := tx.Bucket(bucketPairs).Cursor()
	end := seg.first + uint64(len(seg.recs))
	for block := seg.first &^ (pairBlock - 1); block < end; block += pairBlock {
		prefix := seqKey(block)
		for k, v := c.Seek(prefix); len(k) == 16 && string(k[:8]) == string(prefix); k, v = c.Next() {
			for len(v) > 0 {
				off, n := binary.Uvarint(v)
				if n <= 0 {
					break
				}
				d, m := binary.Uvarint(v[n:])
				if m <= 0 {
					break
				}
				v = v[n+m:]
				req := block + off
				if req >= seg.first && req < end && off < pairBlock {
					if rec := &seg.recs[req-seg.first]; rec.Peer == 0 {
						rec.Peer = req + d
					}
				}
			}
		}
	}
}
