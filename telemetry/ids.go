package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/binary"

	"github.com/acpscope/acpscope/capture"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Span and trace ids are derived from the capture and the record a span
// starts at, not drawn at random: the spans a live run streams and those
// `export --format otlp` later builds from its capture carry the same ids,
// so a backend that has both keeps one copy, and a trace id in a bug
// report can be found again from the capture alone.

// idKey is what the builder asks the generator for, through the context
// of the span it starts.
type idKey struct{}

type spanIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withIDs returns ctx asking for these ids for the next span.
func withIDs(ctx context.Context, ids spanIDs) context.Context {
	return context.WithValue(ctx, idKey{}, ids)
}

// idGenerator hands out the ids the builder put in the context. It is
// safe for concurrent use: it keeps no state.
type idGenerator struct{}

var _ sdktrace.IDGenerator = idGenerator{}

// NewIDs returns the ids of a root span.
func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	ids, _ := ctx.Value(idKey{}).(spanIDs)
	return ids.trace, ids.span
}

// NewSpanID returns the id of a span whose trace is its parent's.
func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	ids, _ := ctx.Value(idKey{}).(spanIDs)
	return ids.span
}

// deriver makes the ids of one capture's spans.
type deriver struct {
	seed [32]byte
}

// newDeriver seeds ids with what names a capture: its start, pid, agent
// and transport, the same whether read live or from the file, and when
// it was exported from another (a bug-report export keeps its source's
// metadata but numbers its records anew).
func newDeriver(meta capture.Meta) deriver {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(meta.Start.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], uint64(meta.Pid))
	h.Write(b[:])
	h.Write([]byte(meta.Agent + "\x00" + meta.Transport + "\x00" + meta.Notes["exportedAt"]))
	var d deriver
	copy(d.seed[:], h.Sum(nil))
	return d
}

// ids returns the ids of the span of kind what that starts at record
// seq: one record starts at most one span of each kind.
func (d deriver) ids(what string, seq uint64) spanIDs {
	h := sha256.New()
	h.Write(d.seed[:])
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	h.Write(b[:])
	h.Write([]byte(what))
	sum := h.Sum(nil)
	var ids spanIDs
	copy(ids.trace[:], sum[:16])
	copy(ids.span[:], sum[16:24])
	if !ids.span.IsValid() { // all zero: one chance in 2^64, but never invalid
		ids.span[7] = 1
	}
	if !ids.trace.IsValid() {
		ids.trace[15] = 1
	}
	return ids
}
