package telemetry

import (
	"fmt"

	"github.com/acpscope/acpscope/capture"
)

// The builder's two feeds: a running capture's watcher, and a finished
// capture read from its file. Both hand it the same records in the same
// order, so both build the same spans.

// Live streams a running capture's spans as its records are committed.
// It is the capture.Watcher the writer feeds on its own goroutine.
type Live struct {
	b *Builder
	p *Pipeline
}

// Watch makes the spans of the capture w records stream through p.
func Watch(w *capture.Writer, p *Pipeline, opts BuilderOptions) error {
	b, err := p.Builder(w.Meta(), opts)
	if err != nil {
		return err
	}
	w.Watch(&Live{b: b, p: p})
	return nil
}

// Record feeds one committed record to the builder.
func (l *Live) Record(rec *capture.Record) { l.b.Record(rec) }

// Finish ends the spans still open, flushes the pipeline (within its
// FlushTimeout) and returns the notes the capture keeps about its spans.
func (l *Live) Finish(skipped uint64) map[string]string {
	l.b.Finish()
	return l.p.Shutdown().Notes(l.p.where, skipped)
}

// Export builds the spans of a finished capture (or anything a Source
// reads) and ships them through p, then flushes it. progress, when set,
// is told how far it got.
func Export(src capture.Source, p *Pipeline, opts BuilderOptions, progress func(done, total uint64)) (Stats, error) {
	b, err := p.Builder(src.Meta(), opts)
	if err != nil {
		return Stats{}, err
	}
	var readErr error
	total := src.Last()
	err = src.Scan(1, func(rec *capture.Record) bool {
		body, err := src.Body(rec.Seq)
		if err != nil {
			readErr = fmt.Errorf("reading record %d: %w", rec.Seq, err)
			return false
		}
		rec.Body = body
		b.Record(rec)
		if progress != nil && rec.Seq%5000 == 0 {
			progress(rec.Seq, total)
		}
		return true
	})
	b.Finish()
	st := p.Shutdown()
	if err == nil {
		err = readErr
	}
	return st, err
}
