package capture

import (
	"crypto/sha256"
	"encoding/binary"
)

// The on-disk layout (FormatVersion 4; version 1 lacked bodies-big,
// versions 1 and 2 ordered the id index keys bucket first, version 3
// kept a huge body whole under "body", and all are still read). Every bucket is declared once here so a typo cannot create
// a new one.
//
//	meta         "version" → decimal FormatVersion
//	             "meta"    → Meta as JSON
//	             "last"    → 8-byte big-endian highest committed seq
//	             "findings"→ []protocol.Finding as JSON
//	msgs         seg key → encoded metadata of a segment's records
//	bodies       seg key → the segment's bodies, concatenated
//	bodies-big   seg key → a bucket holding the one body of a segment
//	             larger than segMaxBytes, in pieces: 4-byte big-endian
//	             piece number → up to bodyPieceBytes of it (see putBodies)
//	pairs        8-byte request seq block, 8-byte commit seq → (request,
//	             response) pairs (see pairs.go)
//	idx-method, idx-session
//	             term 0x00 8-byte commit seq → varint-delta seqs
//	idx-id-client, idx-id-agent
//	             8-byte commit seq, hash bucket byte → (term, seq) entries
//	             (see idindex.go for why ids differ)
//
// A segment key is the 8-byte big-endian seq of its first record, so
// byte order is time order and a cursor Seek + Prev finds any seq.
var (
	bucketMeta     = []byte("meta")
	bucketMsgs     = []byte("msgs")
	bucketBodies   = []byte("bodies")
	bucketBig      = []byte("bodies-big")
	bucketPairs    = []byte("pairs")
	bucketMethod   = []byte("idx-method")
	bucketSession  = []byte("idx-session")
	bucketIDClient = []byte("idx-id-client")
	bucketIDAgent  = []byte("idx-id-agent")

	// v1Buckets are in every capture; newer ones by the version that
	// added them (checked on open).
	v1Buckets  = [][]byte{bucketMeta, bucketMsgs, bucketBodies, bucketPairs, bucketMethod, bucketSession, bucketIDClient, bucketIDAgent}
	allBuckets = append(v1Buckets[:len(v1Buckets):len(v1Buckets)], bucketBig)

	keyVersion  = []byte("version")
	keyMeta     = []byte("meta")
	keyLast     = []byte("last")
	keyFindings = []byte("findings")
	keyBody     = []byte("body") // a huge body whole, in format 3
)

// bodyPieceBytes is the most of a huge body one bbolt value holds. bbolt
// copies a value into its page buffer with one memmove, which the Go
// runtime cannot preempt: with a 100 MB body kept whole, a garbage
// collection that began meanwhile spun waiting to stop the committing
// goroutine (a fifth of the proxy's CPU in perf, and a seventh more in
// the signals it sent it) and stopped the world, forwarding with it, for
// up to 214 ms (GODEBUG=gctrace=1). Nine 100 MB lines echoed through the
// proxy half a second apart, three runs alternating with the build
// before: capture lost 28–137 MB of the 1.8 GB against 397–534 MB, and
// the slowest echo took 168–242 ms against 352–500 ms (medians moved
// within their spread, 160–185 ms against 156–213 ms).
const bodyPieceBytes = 1 << 20

// pieceKey is the key of piece i of a huge body.
func pieceKey(i uint32) []byte { return binary.BigEndian.AppendUint32(nil, i) }

// oldestFormat is the oldest FormatVersion this package reads.
const oldestFormat = 1

// seqFirstIDs is the first FormatVersion whose id index keys begin with
// the commit seq.
const seqFirstIDs = 3

// Segment limits: a segment never spans a commit and holds at most this
// many records or body bytes; a larger body is a segment of its own.
const (
	segMaxRecords = 256
	segMaxBytes   = 256 << 10
)

// maxTermLen bounds index keys (bbolt keys are limited to 32 KiB); longer
// terms are indexed by a digest, which Lookup computes the same way.
const maxTermLen = 512

// indexBucket returns the bucket name of an index, nil if unknown.
func indexBucket(ix Index) []byte {
	switch ix {
	case IndexMethod:
		return bucketMethod
	case IndexSession:
		return bucketSession
	case IndexIDClient:
		return bucketIDClient
	case IndexIDAgent:
		return bucketIDAgent
	}
	return nil
}

// indexTerm turns a term into the bytes stored in index keys.
func indexTerm(term string) string {
	if len(term) <= maxTermLen {
		return term
	}
	sum := sha256.Sum256([]byte(term))
	return "\xff\xfesha256:" + string(sum[:])
}

// seqKey encodes a sequence number as a bucket key.
func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// postingKey is term + 0x00 + the commit's first seq.
func postingKey(term string, first uint64) []byte {
	k := make([]byte, 0, len(term)+9)
	k = append(k, term...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, first)
}

// appendPostings delta-encodes ascending seqs against base.
func appendPostings(dst []byte, base uint64, seqs []uint64) []byte {
	prev := base
	for _, s := range seqs {
		dst = binary.AppendUvarint(dst, s-prev)
		prev = s
	}
	return dst
}

// decodePostings is the inverse of appendPostings; it reports false on
// malformed input: a bad varint, or seqs that do not ascend strictly from
// base (a repeated seq, or one past the largest).
func decodePostings(dst []uint64, base uint64, v []byte) ([]uint64, bool) {
	prev := base
	for first := true; len(v) > 0; first = false {
		d, n := binary.Uvarint(v)
		if n <= 0 || d == 0 && !first || prev+d < prev {
			return dst, false
		}
		prev += d
		dst = append(dst, prev)
		v = v[n:]
	}
	return dst, true
}
