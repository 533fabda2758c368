package capture

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// A segment is a run of consecutive records stored as two values under
// the same key: their metadata, encoded compactly here, and their bodies
// concatenated. Packing records into segments turns the per-record cost
// of a bbolt Put into a per-segment one.
//
// Metadata encoding (all integers varints, "u" unsigned):
//
//	byte  segVersion
//	u     record count
//	then per record:
//	  s   time minus the previous record's time (the first: minus 0)
//	  byte dir, byte kind
//	  u   flags | hop<<16 (the proxy-chain hop rides above the flags,
//	      so captures stay readable both ways), u conn
//	  u   id length + 1 (0: no id), id bytes
//	  u   method ref, u session ref (see appendRef)
//	  s   error code
//	  u   size
//	  u   seq - parent (0: none)
//	  u   peer (0: none)
//	  s   latency in ns
//	  u   HTTP envelope JSON length (0: none), JSON bytes
//	  u   body length (bodies follow each other in the bodies value)
//
// A segment holding a record that acpscope altered (protocol.Fault) is
// version segVersionFaults and ends with a fault table:
//
//	u   entries, then per entry: u record index, u JSON length, JSON bytes
//
// so a capture made without faults is byte for byte what it always was.
const (
	segVersion       = 1
	segVersionFaults = 2
)

var errSegment = errors.New("malformed segment")

// minRecordLen is the fewest bytes one record's metadata takes (fifteen
// one-byte fields); it bounds what a damaged count can make us allocate.
const minRecordLen = 15

// segEncoder builds one segment's metadata value.
type segEncoder struct {
	buf      []byte
	count    int
	prevTime int64
	strs     map[string]uint64
	faults   []byte // the fault table's entries
	nfaults  int
	// lastEnv and lastEnvJSON remember the envelope encoded last: the
	// events of one SSE response share theirs, and encoding it once
	// rather than per event took a fifth of the builder's time.
	lastEnv     *wire.Envelope
	lastEnvJSON []byte
}

func (e *segEncoder) reset() {
	e.buf = e.buf[:0]
	e.count = 0
	e.prevTime = 0
	e.faults = e.faults[:0]
	e.nfaults = 0
	clear(e.strs)
}

// add appends r's metadata; its body length is len(r.Body).
func (e *segEncoder) add(r *Record) {
	if e.strs == nil {
		e.strs = make(map[string]uint64)
	}
	b := e.buf
	b = binary.AppendVarint(b, r.Time-e.prevTime)
	e.prevTime = r.Time
	b = append(b, byte(r.Dir), byte(r.Kind))
	b = binary.AppendUvarint(b, uint64(r.Flags)|uint64(r.Hop)<<16)
	b = binary.AppendUvarint(b, uint64(r.Conn))
	if r.ID == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(r.ID))+1)
		b = append(b, r.ID...)
	}
	b = e.appendRef(b, r.Method)
	b = e.appendRef(b, r.Session)
	b = binary.AppendVarint(b, r.ErrorCode)
	b = binary.AppendUvarint(b, uint64(r.Size))
	var parent uint64
	if r.Parent != 0 {
		parent = r.Seq - r.Parent
	}
	b = binary.AppendUvarint(b, parent)
	b = binary.AppendUvarint(b, r.Peer)
	b = binary.AppendVarint(b, int64(r.Latency))
	if r.HTTP == nil {
		b = append(b, 0)
	} else {
		env := e.envelopeJSON(r.HTTP)
		b = binary.AppendUvarint(b, uint64(len(env)))
		b = append(b, env...)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Body)))
	e.buf = b
	if r.Fault != nil {
		f, _ := json.Marshal(r.Fault) // strings and numbers cannot fail
		e.faults = binary.AppendUvarint(e.faults, uint64(e.count))
		e.faults = binary.AppendUvarint(e.faults, uint64(len(f)))
		e.faults = append(e.faults, f...)
		e.nfaults++
	}
	e.count++
}

// envelopeJSON returns env encoded, from the last encoding when env is
// the same envelope (the caller never changes one it handed over).
func (e *segEncoder) envelopeJSON(env *wire.Envelope) []byte {
	if env != e.lastEnv {
		e.lastEnvJSON, _ = json.Marshal(env) // a struct of strings and maps cannot fail
		e.lastEnv = env
	}
	return e.lastEnvJSON
}

// appendRef writes a string through the segment's string table: 0 is
// "", n ≤ table size refers to entry n, and table size + 1 introduces a
// new entry (length and bytes follow). Methods and sessions repeat a lot.
func (e *segEncoder) appendRef(b []byte, s string) []byte {
	if s == "" {
		return append(b, 0)
	}
	if ref, ok := e.strs[s]; ok {
		return binary.AppendUvarint(b, ref)
	}
	ref := uint64(len(e.strs)) + 1
	e.strs[s] = ref
	b = binary.AppendUvarint(b, ref)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// value returns the finished metadata value: version, count, records.
func (e *segEncoder) value() []byte {
	out := make([]byte, 0, len(e.buf)+len(e.faults)+2*binary.MaxVarintLen64)
	if e.nfaults == 0 {
		out = append(out, segVersion)
		out = binary.AppendUvarint(out, uint64(e.count))
		return append(out, e.buf...)
	}
	out = append(out, segVersionFaults)
	out = binary.AppendUvarint(out, uint64(e.count))
	out = append(out, e.buf...)
	out = binary.AppendUvarint(out, uint64(e.nfaults))
	return append(out, e.faults...)
}

// segment is a decoded segment: records without bodies, and where each
// body lies in the bodies value.
type segment struct {
	first   uint64
	recs    []Record
	offsets []int64 // len(recs)+1 entries: body i is [offsets[i], offsets[i+1])
	// size is the length of the encoded metadata, for Reader.touch.
	size int
}

// contains reports whether seq lies in the segment.
func (s *segment) contains(seq uint64) bool {
	return s != nil && seq >= s.first && seq < s.first+uint64(len(s.recs))
}

// segDecoder reads a metadata value, checking every bound: a capture may
// be damaged, and decoding must fail cleanly rather than panic.
type segDecoder struct {
	b    []byte
	err  error
	strs []string
}

// decodeSegment decodes the metadata value v of the segment whose first
// record has seq first. Strings and ids are copied out of v.
func decodeSegment(first uint64, v []byte) (*segment, error) {
	d := segDecoder{b: v}
	version := d.byte()
	if version != segVersion && version != segVersionFaults {
		return nil, fmt.Errorf("segment %d: unknown version: %w", first, errSegment)
	}
	count := d.uvarint()
	if d.err != nil || count == 0 || count > uint64(len(v))/minRecordLen {
		return nil, fmt.Errorf("segment %d: bad record count: %w", first, errSegment)
	}
	seg := &segment{first: first, recs: make([]Record, count), offsets: make([]int64, count+1), size: len(v)}
	var t, off int64
	for i := range seg.recs {
		r := &seg.recs[i]
		r.Seq = first + uint64(i)
		t += d.varint()
		r.Time = t
		r.Dir = wire.Dir(d.byte())
		r.Kind = wire.Kind(d.byte())
		flags := d.uvarint()
		r.Flags, r.Hop = wire.Flags(flags), uint8(flags>>16)
		r.Conn = uint32(d.uvarint())
		if n := d.uvarint(); n > 0 {
			r.ID = d.bytes(n - 1)
		}
		r.Method = d.ref()
		r.Session = d.ref()
		r.ErrorCode = d.varint()
		r.Size = int64(d.uvarint())
		if p := d.uvarint(); p != 0 && p < r.Seq {
			r.Parent = r.Seq - p
		}
		r.Peer = d.uvarint()
		r.Latency = time.Duration(d.varint())
		if n := d.uvarint(); n > 0 {
			env := d.bytes(n)
			if d.err == nil {
				r.HTTP = new(wire.Envelope)
				if err := json.Unmarshal(env, r.HTTP); err != nil {
					d.fail()
				}
			}
		}
		n := d.uvarint()
		if n > 1<<40 {
			d.fail()
		}
		off += int64(n)
		seg.offsets[i+1] = off
		if d.err != nil {
			return nil, fmt.Errorf("segment %d record %d: %w", first, i, d.err)
		}
	}
	if version == segVersionFaults {
		if err := d.faults(seg); err != nil {
			return nil, fmt.Errorf("segment %d fault table: %w", first, err)
		}
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("segment %d: trailing bytes: %w", first, errSegment)
	}
	return seg, nil
}

// faults reads the fault table onto the segment's records.
func (d *segDecoder) faults(seg *segment) error {
	n := d.uvarint()
	if n > uint64(len(seg.recs)) {
		d.fail()
	}
	for range n {
		i := d.uvarint()
		raw := d.bytes(d.uvarint())
		if d.err != nil || i >= uint64(len(seg.recs)) {
			d.fail()
			return d.err
		}
		f := new(protocol.Fault)
		if err := json.Unmarshal(raw, f); err != nil {
			d.fail()
			return d.err
		}
		seg.recs[i].Fault = f
	}
	return d.err
}

// isSegVersion reports a segment metadata version this package reads.
func isSegVersion(v byte) bool { return v == segVersion || v == segVersionFaults }

func (d *segDecoder) fail() {
	if d.err == nil {
		d.err = errSegment
	}
	d.b = nil
}

func (d *segDecoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *segDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *segDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns a copy of the next n bytes.
func (d *segDecoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	out := make([]byte, n)
	copy(out, d.b)
	d.b = d.b[n:]
	return out
}

func (d *segDecoder) ref() string {
	ref := d.uvarint()
	switch {
	case ref == 0:
		return ""
	case ref <= uint64(len(d.strs)):
		return d.strs[ref-1]
	case ref == uint64(len(d.strs))+1:
		s := string(d.bytes(d.uvarint()))
		d.strs = append(d.strs, s)
		return s
	}
	d.fail()
	return ""
}
