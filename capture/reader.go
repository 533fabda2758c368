package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/acpscope/acpscope/protocol"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// openTimeout is how long Open waits for the file lock a running proxy
// holds before saying the capture is live.
var openTimeout = 150 * time.Millisecond

// Reader reads a finished capture file. It is safe for concurrent use.
type Reader struct {
	path string
	db   *bolt.DB
	meta Meta
	last uint64
	// format is the layout version the file declares.
	format int

	mu     sync.Mutex // guards cached and closed
	cached *segment
	closed bool

	// touched counts the bytes of the mapped file read since its pages
	// were last released (see touch).
	touched atomic.Int64

	fileOnce sync.Once
	file     *os.File // for reading large bodies (readMapped); nil if it failed to open
}

// Open opens a capture read-only. It returns an error wrapping ErrLive
// when a running proxy holds the file, ErrCorrupt or ErrNotCapture when
// the file cannot be read as a capture.
func Open(path string) (*Reader, error) {
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	db, err := openBolt(path)
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, liveError(path)
	case err != nil:
		return nil, corruptError(path, err)
	}
	r := &Reader{path: path, db: db}
	if err := r.load(); err != nil {
		db.Close()
		return nil, err
	}
	return r, nil
}

// openBolt opens the file read-only, turning a panic or fault on a
// damaged file into an error.
func openBolt(path string) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, fmt.Errorf("%v", p)
		}
	}()
	return bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
}

func liveError(path string) error {
	return fmt.Errorf("opening capture %s: %w; `acpscope tail` and the inspector read it through its live feed", path, ErrLive)
}

func corruptError(path string, cause error) error {
	return fmt.Errorf("opening capture %s: %w (%v); it cannot be read: if a proxy was killed while creating it, delete it; otherwise keep it and report the problem", path, ErrCorrupt, cause)
}

// checkHeader rejects what bbolt would misread: a missing, empty or
// foreign file (bbolt's first page carries its magic number at byte 16).
func checkHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("opening capture %s: %w; `acpscope ls` lists the captures", path, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("opening capture %s: %w", path, err)
	}
	defer f.Close()
	var hdr [32]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return corruptError(path, errors.New("shorter than a database header"))
	}
	if binary.LittleEndian.Uint32(hdr[16:]) != 0xED0CDAED {
		return corruptError(path, errors.New("not a bbolt database"))
	}
	return nil
}

// guard turns what a damaged file does to a read into ErrCorrupt: a
// memory fault (bbolt reads pages through an mmap, and a damaged file can
// point anywhere) or a panic raised inside bbolt, which follows the pages
// it finds without checking them all. Our own decoders check the bytes
// they read and return errors; a panic anywhere else (a decoder, a
// caller's callback) is a bug, not damage, and goes on panicking so that
// it is reported as one, with the stack where it happened. Call as
// defer r.guard(&err)() at the top of every read.
func (r *Reader) guard(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		p := recover()
		if p == nil {
			return
		}
		if !isFault(p) && !panickedIn("go.etcd.io/bbolt") {
			panic(p)
		}
		*err = corruptError(r.path, fmt.Errorf("reading the database failed: %v", p))
	}
}

// isFault reports whether p is a memory fault turned into a panic by
// debug.SetPanicOnFault.
func isFault(p any) bool {
	_, ok := p.(interface{ Addr() uintptr })
	_, rt := p.(runtime.Error)
	return ok && rt
}

// panickedIn reports whether the panic being recovered was raised in the
// code of the module at path: called from a deferred function, it reads
// the first frame below the runtime's panic machinery.
func panickedIn(path string) bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return f.Function == path || strings.HasPrefix(f.Function, path+".") || strings.HasPrefix(f.Function, path+"/")
		}
		if !more {
			return false
		}
	}
}

// load reads the metadata and checks that the file is whole.
func (r *Reader) load() (err error) {
	defer r.guard(&err)()
	fi, err := os.Stat(r.path)
	if err != nil {
		return fmt.Errorf("opening capture %s: %w", r.path, err)
	}
	return r.db.View(func(tx *bolt.Tx) error {
		if tx.Size() > fi.Size() {
			return corruptError(r.path, fmt.Errorf("truncated: %d of %d bytes", fi.Size(), tx.Size()))
		}
		mb := tx.Bucket(bucketMeta)
		if mb == nil || mb.Get(keyVersion) == nil {
			return fmt.Errorf("opening %s: %w (a bbolt database without acpscope metadata)", r.path, ErrNotCapture)
		}
		v, _ := strconv.Atoi(string(mb.Get(keyVersion)))
		if v < oldestFormat || v > FormatVersion {
			return fmt.Errorf("opening capture %s: format version %q is not one this acpscope reads (%d to %d): use the acpscope version that wrote it", r.path, mb.Get(keyVersion), oldestFormat, FormatVersion)
		}
		r.format = v
		buckets := allBuckets
		if v == 1 {
			buckets = v1Buckets
		}
		for _, name := range buckets {
			if tx.Bucket(name) == nil {
				return corruptError(r.path, fmt.Errorf("bucket %s missing", name))
			}
		}
		if err := json.Unmarshal(mb.Get(keyMeta), &r.meta); err != nil {
			return corruptError(r.path, fmt.Errorf("metadata: %v", err))
		}
		if last := mb.Get(keyLast); len(last) == 8 {
			r.last = binary.BigEndian.Uint64(last)
		}
		return nil
	})
}

// Path returns the file's path.
func (r *Reader) Path() string { return r.path }

// Meta returns the capture's metadata.
func (r *Reader) Meta() Meta { return r.meta }

// Last returns the highest sequence number stored (0 if none).
func (r *Reader) Last() uint64 { return r.last }

// Record returns the metadata of one record, without its body.
func (r *Reader) Record(seq uint64) (rec Record, err error) {
	defer r.guard(&err)()
	seg, err := r.segment(seq)
	if err != nil {
		return Record{}, err
	}
	return seg.record(seq), nil
}

// Body returns a copy of the record's exact bytes.
func (r *Reader) Body(seq uint64) (body []byte, err error) {
	defer r.guard(&err)()
	seg, err := r.segment(seq)
	if err != nil {
		return nil, err
	}
	err = r.db.View(func(tx *bolt.Tx) error {
		all, owned := segmentBodies(tx, seg.first)
		body, err = r.copyBody(seg, all, owned, seq)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading record %d of %s: %w", seq, r.path, err)
	}
	return body, nil
}

// Scan calls fn with each record from seq on, in order, without bodies,
// until fn returns false or the records end. fn runs outside any
// transaction and may call the Reader.
func (r *Reader) Scan(from uint64, fn func(*Record) bool) (err error) {
	defer r.guard(&err)()
	if from == 0 {
		from = 1
	}
	for from <= r.last {
		var seg *segment
		err := r.db.View(func(tx *bolt.Tx) error {
			var err error
			seg, err = findSegment(tx, from, true)
			return err
		})
		if err != nil {
			return fmt.Errorf("scanning %s: %w", r.path, err)
		}
		if seg == nil {
			return nil
		}
		r.touch(seg.size)
		for seq := max(from, seg.first); seq < seg.first+uint64(len(seg.recs)); seq++ {
			rec := seg.record(seq)
			if !fn(&rec) {
				return nil
			}
		}
		from = seg.first + uint64(len(seg.recs))
	}
	return nil
}

// Lookup returns, in order, the sequence numbers an index holds for term
// (a method, a sessionId, or the exact bytes of an id).
func (r *Reader) Lookup(ix Index, term string) (seqs []uint64, err error) {
	defer r.guard(&err)()
	err = r.db.View(func(tx *bolt.Tx) error {
		seqs, err = lookup(tx, ix, term, r.format)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("looking up %q in %s: %w", term, r.path, err)
	}
	return seqs, nil
}

// Findings returns the stored lint findings.
func (r *Reader) Findings() (fs []protocol.Finding, err error) {
	defer r.guard(&err)()
	err = r.db.View(func(tx *bolt.Tx) error {
		fs, err = readFindings(tx)
		return err
	})
	return fs, err
}

// Close releases the file. It is idempotent.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.file != nil {
		r.file.Close()
	}
	return r.db.Close()
}

// segment returns the segment holding seq, from the cache or the file.
// The deferred unlock matters: a damaged file can make bbolt panic here.
func (r *Reader) segment(seq uint64) (*segment, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if r.cached.contains(seq) {
		return r.cached, nil
	}
	var seg *segment
	err := r.db.View(func(tx *bolt.Tx) error {
		var err error
		seg, err = findSegment(tx, seq, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading record %d of %s: %w", seq, r.path, err)
	}
	r.touch(seg.size)
	r.cached = seg
	return seg, nil
}

// findSegment decodes the segment holding seq. With next, a seq that
// falls in a hole (a failed commit) gives the following segment, and the
// end of the records gives nil.
func findSegment(tx *bolt.Tx, seq uint64, next bool) (*segment, error) {
	c := tx.Bucket(bucketMsgs).Cursor()
	k, v := c.Seek(seqKey(seq))
	if k == nil {
		k, v = c.Last()
	}
	if len(k) == 8 && binary.BigEndian.Uint64(k) > seq {
		if pk, pv := c.Prev(); pk != nil {
			k, v = pk, pv
		} else {
			k, v = c.First()
		}
	}
	if k == nil || len(k) != 8 {
		if next {
			return nil, nil
		}
		return nil, ErrNoRecord
	}
	seg, err := decodeSegment(binary.BigEndian.Uint64(k), v)
	if err != nil {
		return nil, err
	}
	if !seg.contains(seq) {
		if !next {
			return nil, ErrNoRecord
		}
		if seg.first < seq { // seq is past this one: take the following
			k, v = c.Next()
			if k == nil || len(k) != 8 {
				return nil, nil
			}
			if seg, err = decodeSegment(binary.BigEndian.Uint64(k), v); err != nil {
				return nil, err
			}
		}
	}
	fillPeers(tx, seg)
	return seg, nil
}

// record returns a copy of the record seq, which the segment holds.
func (s *segment) record(seq uint64) Record {
	rec := s.recs[seq-s.first]
	rec.ID = bytes.Clone(rec.ID)
	if rec.HTTP != nil {
		env := *rec.HTTP
		rec.HTTP = &env
	}
	if rec.Fault != nil {
		f := *rec.Fault
		rec.Fault = &f
	}
	return rec
}

// body returns record seq's bytes in the segment's bodies value, a view
// valid for the transaction all was read in.
func (s *segment) body(all []byte, seq uint64) ([]byte, error) {
	i := seq - s.first
	if int64(len(all)) != s.offsets[len(s.offsets)-1] {
		return nil, fmt.Errorf("segment %d: bodies hold %d bytes, metadata says %d: %w", s.first, len(all), s.offsets[len(s.offsets)-1], errSegment)
	}
	return all[s.offsets[i]:s.offsets[i+1]:s.offsets[i+1]], nil
}

// copyBody returns record seq's bytes out of the bodies all, copied when
// all is a view into the mapped file and as they are when the memory is
// already owned (segmentBodies).
func (r *Reader) copyBody(s *segment, all []byte, owned bool, seq uint64) ([]byte, error) {
	view, err := s.body(all, seq)
	if err != nil || owned {
		return view, err
	}
	return r.copyMapped(view), nil
}

// copyMapped copies a view of the mapped file into memory of its own. A
// large view is read from the file at its offset instead (readMapped),
// or else copied a piece at a time, each piece's pages released once
// copied, so a 200 MB body costs its copy and not twice its size.
func (r *Reader) copyMapped(view []byte) []byte {
	if len(view) < releasePiece {
		r.touch(len(view))
		return bytes.Clone(view)
	}
	if out, ok := r.readMapped(view); ok {
		return out
	}
	out := make([]byte, 0, len(view))
	for off := 0; off < len(view); off += releasePiece {
		piece := view[off:min(off+releasePiece, len(view))]
		out = append(out, piece...)
		releaseRange(piece)
	}
	return out
}

// readMapped reads the bytes a view of the mapped file shows from the
// file itself: the kernel copies them from its cache without faulting
// in, then holding, a page of the map for every 4 KiB, which made a copy
// of a 200 MB body take a second. bbolt maps the whole file from offset
// 0, so the view's offset in the file is its offset in the map; the ends
// of what was read are checked against the view all the same.
func (r *Reader) readMapped(view []byte) ([]byte, bool) {
	r.fileOnce.Do(func() { r.file, _ = os.Open(r.path) })
	base := r.db.Info().Data
	at := uintptr(unsafe.Pointer(unsafe.SliceData(view)))
	if r.file == nil || base == 0 || at < base {
		return nil, false
	}
	out := make([]byte, len(view))
	if n, err := r.file.ReadAt(out, int64(at-base)); err != nil || n != len(out) {
		return nil, false
	}
	const check = 64
	if !bytes.Equal(out[:check], view[:check]) || !bytes.Equal(out[len(out)-check:], view[len(view)-check:]) {
		return nil, false
	}
	releaseRange(view[:check])
	releaseRange(view[len(view)-check:])
	return out, true
}

// releasePiece is how much of a large body is copied before its pages
// are released, and releaseTouched how much a Reader reads before it
// releases what it has read.
const (
	releasePiece   = 4 << 20
	releaseTouched = 8 << 20
)

// touch counts n bytes of the mapped file read and, past releaseTouched,
// releases the pages read so far: reading every record of a capture
// would otherwise keep the whole file resident in the reader's memory.
func (r *Reader) touch(n int) {
	if r.touched.Add(int64(n)) > releaseTouched {
		r.touched.Store(0)
		r.releaseMapped()
	}
}

// lookup merges the postings of term in index ix of a capture of the
// given format.
func lookup(tx *bolt.Tx, ix Index, term string, format int) ([]uint64, error) {
	name := indexBucket(ix)
	if name == nil {
		return nil, fmt.Errorf("unknown index %d", ix)
	}
	if ix == IndexIDClient || ix == IndexIDAgent {
		return lookupID(tx.Bucket(name), indexTerm(term), format)
	}
	prefix := append([]byte(indexTerm(term)), 0)
	var seqs []uint64
	c := tx.Bucket(name).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+8 {
			continue
		}
		var ok bool
		if seqs, ok = decodePostings(seqs, binary.BigEndian.Uint64(k[len(prefix):]), v); !ok {
			return nil, fmt.Errorf("index entry for %q: %w", term, errSegment)
		}
	}
	return seqs, nil
}

func readFindings(tx *bolt.Tx) ([]protocol.Finding, error) {
	v := tx.Bucket(bucketMeta).Get(keyFindings)
	if v == nil {
		return nil, nil
	}
	fs := []protocol.Finding{} // non-nil: linted, even when lint found nothing
	if err := json.Unmarshal(v, &fs); err != nil {
		return nil, fmt.Errorf("stored findings: %w", err)
	}
	if fs == nil {
		fs = []protocol.Finding{}
	}
	return fs, nil
}
