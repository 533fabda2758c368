package capture

import (
	"fmt"
	"slices"
	"sync"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	bolt "go.etcd.io/bbolt"
)

// Exporter reads what one export covers, selected and redacted: every
// export format (the capture file, JSONL, the HTML report, HAR) goes
// through one, so none can skip the redaction the others apply. It
// streams: records are read, redacted and handed on one at a time.
// An Exporter is used by one goroutine.
type Exporter struct {
	src  Source
	opts ExportOptions
	sel  *Selection
	red  *Redactor
	res  ExportResult
}

// NewExporter selects the session opts names from src (one pass over the
// records, without bodies) and builds the redactor.
func NewExporter(src Source, opts ExportOptions) (*Exporter, error) {
	sel, err := SelectSession(src, opts.Session, opts.AllSessions)
	if err != nil {
		return nil, err
	}
	red, err := NewRedactor(opts.Redact)
	if err != nil {
		return nil, err
	}
	return &Exporter{src: src, opts: opts, sel: sel, red: red, res: ExportResult{Session: sel.Session}}, nil
}

// Session is the exported session ("" when the capture has none).
func (e *Exporter) Session() string { return e.sel.Session }

// Redacting reports whether the export is redacted.
func (e *Exporter) Redacting() bool { return !e.opts.NoRedact }

// Result is what the export has covered so far: the records handed on
// and what was redacted, by the source's sequence numbers.
func (e *Exporter) Result() ExportResult { return e.res }

// Meta returns the source's metadata, redacted, with notes saying where
// the export came from; what it redacted joins the result.
func (e *Exporter) Meta() Meta {
	m, found := exportMeta(e.src.Meta(), e.red, e.opts)
	e.res.Redactions = append(e.res.Redactions, found...)
	return m
}

// Each calls fn with every selected record, in order, with its body,
// redacted. fn may keep the record and its body. Batch members are left
// out unless members is set: the batch line carries their bytes, and is
// what every format but a viewer's writes. An error from fn stops Each
// and is returned. Call Meta, if at all, before Each, and Result after.
//
// Reading, redacting and fn run at once, on two goroutines of Each's and
// the caller's: redaction costs more than reading and writing together,
// and in a line the three take little longer than redaction alone. The
// bodies between the stages hold at most pipeBytes (or one body larger
// than that), so memory stays bounded however large the capture.
func (e *Exporter) Each(members bool, fn func(*Record) error) error {
	p := newPipe(pipeBytes)
	read := make(chan batch, pipeBatches)
	redacted := make(chan batch, pipeBatches)
	var readErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the reader: selects records and copies their bodies
		defer wg.Done()
		defer close(read)
		readErr = e.read(members, p, read)
	}()
	go func() { // the redactor
		defer wg.Done()
		defer close(redacted)
		for b := range read {
			for _, r := range b.recs {
				e.res.Redactions = append(e.res.Redactions, redactRecord(e.red, r, e.opts)...)
			}
			e.res.Records += len(b.recs)
			p.send(redacted, b)
		}
	}()
	var err error
	for b := range redacted {
		for i := 0; i < len(b.recs) && err == nil; i++ {
			if err = fn(b.recs[i]); err != nil {
				p.stop()
			}
		}
		p.release(b.size)
	}
	wg.Wait()
	if err != nil {
		return err
	}
	return readErr
}

// read is Each's first stage: it sends the selected records, with copies
// of their bodies, to out in batches.
func (e *Exporter) read(members bool, p *pipe, out chan<- batch) error {
	var looked uint64
	want := func(r *Record) bool {
		looked++
		if e.opts.Progress != nil && looked%5000 == 0 {
			e.opts.Progress(looked, e.sel.Total)
		}
		return e.sel.Includes(r) && (members || r.Flags&wire.FlagBatchMember == 0)
	}
	var b batch
	reserve := func(n int64) bool {
		// The records of the batch being filled hold bytes too: send them
		// on before waiting for room they would never give back.
		if len(b.recs) > 0 && !p.fits(n) {
			if !p.send(out, b) {
				return false
			}
			b = batch{}
		}
		return p.reserve(n)
	}
	err := eachBody(e.src, want, reserve, func(r *Record) error {
		b.recs = append(b.recs, r)
		b.size += int64(len(r.Body))
		if len(b.recs) < batchRecords && b.size < batchBytes {
			return nil
		}
		if !p.send(out, b) {
			return errPipeStopped
		}
		b = batch{}
		return nil
	})
	if err == nil && len(b.recs) > 0 && !p.send(out, b) {
		err = errPipeStopped
	}
	return err
}

// Findings returns the lint findings stored with the source (nil when it
// was never linted) about the records in seqs, their messages redacted:
// a finding quotes what it found.
func (e *Exporter) Findings(seqs func(uint64) bool) ([]protocol.Finding, error) {
	all, err := e.src.Findings()
	if all == nil || err != nil {
		return nil, err
	}
	out := []protocol.Finding{}
	for _, f := range all {
		if !slices.ContainsFunc(f.Seqs, seqs) {
			continue
		}
		if !e.opts.NoRedact {
			msg, _ := e.red.Text([]byte(f.Message))
			f.Message = string(msg)
		}
		out = append(out, f)
	}
	return out, nil
}

// eachBody calls fn with each record of src that want accepts, with a
// copy of its body, in order. Before it copies bodies it asks reserve for
// room for their bytes, and stops if reserve says no. A Reader is read a
// segment per read transaction, its mapped pages released as it goes;
// other sources through Scan and Body.
func eachBody(src Source, want func(*Record) bool, reserve func(int64) bool, fn func(*Record) error) error {
	var ferr error
	call := func(r *Record) bool {
		ferr = fn(r)
		return ferr == nil
	}
	var err error
	if r, ok := src.(*Reader); ok {
		err = r.eachBody(want, reserve, call)
	} else {
		err = src.Scan(1, func(r *Record) bool {
			if !want(r) {
				return true
			}
			body, err := src.Body(r.Seq)
			if err != nil {
				ferr = fmt.Errorf("reading record %d: %w", r.Seq, err)
				return false
			}
			if !reserve(int64(len(body))) {
				ferr = errPipeStopped
				return false
			}
			r.Body = body
			return call(r)
		})
	}
	if ferr != nil {
		return ferr
	}
	return err
}

// eachBody is eachBody for a Reader: each segment's records are listed in
// one read transaction, and the bodies of those wanted copied in another,
// so want may call the Reader.
func (r *Reader) eachBody(want func(*Record) bool, reserve func(int64) bool, fn func(*Record) bool) (err error) {
	defer r.guard(&err)()
	for from := uint64(1); from <= r.last; {
		var seg *segment
		err := r.db.View(func(tx *bolt.Tx) error {
			var err error
			seg, err = findSegment(tx, from, true)
			return err
		})
		if err != nil || seg == nil {
			return err
		}
		r.touch(seg.size)
		end := seg.first + uint64(len(seg.recs))
		var recs []Record
		var size int64
		for seq := max(from, seg.first); seq < end; seq++ {
			if rec := seg.record(seq); want(&rec) {
				recs = append(recs, rec)
				size += seg.offsets[seq-seg.first+1] - seg.offsets[seq-seg.first]
			}
		}
		if len(recs) > 0 && !reserve(size) {
			return errPipeStopped
		}
		if err := r.db.View(func(tx *bolt.Tx) error {
			all, owned := segmentBodies(tx, seg.first)
			for i := range recs {
				if recs[i].Body, err = r.copyBody(seg, all, owned, recs[i].Seq); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("reading %s: %w", r.path, err)
		}
		for i := range recs {
			rec := recs[i]
			recs[i] = Record{} // fn owns it now: a large body goes with it
			if !fn(&rec) {
				return nil
			}
		}
		from = end
	}
	return nil
}
