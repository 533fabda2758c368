package telemetry

import (
	"time"

	"go.opentelemetry.io/otel/attribute"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// span is a span being built, with its events counted: past the SDK's
// event limit (OTEL_SPAN_EVENT_COUNT_LIMIT, 128 by default) the builder
// stops making events at all, since the SDK would drop them anyway, and
// a flood of stray notifications or stderr lines would cost CPU for
// nothing; acp.events.dropped says how many there were.
//
// It also holds the attributes set after the start until the end, and
// hands them to the SDK in one call: each call sorts and de-duplicates
// all of the span's attributes again.
type span struct {
	trace.Span
	limit, events int
	attrs         []attribute.KeyValue
}

// SetAttributes keeps kv for the end; the last value of a key wins.
func (s *span) SetAttributes(kv ...attribute.KeyValue) { s.attrs = append(s.attrs, kv...) }

// eventLimit is the SDK's limit on events per span, as configured.
var eventLimit = sdktrace.NewSpanLimits().EventCountLimit

func (b *Builder) newSpan(s trace.Span) *span { return &span{Span: s, limit: eventLimit} }

// event adds an event unless the span has all it can hold.
func (s *span) event(name string, opts ...trace.EventOption) {
	s.events++
	if s.limit >= 0 && s.events > s.limit {
		return
	}
	s.AddEvent(name, opts...)
}

// end ends the span at t (unix ns).
func (s *span) end(t int64) {
	if s.limit >= 0 && s.events > s.limit {
		s.attrs = append(s.attrs, keyEventsDropped.Int(s.events-s.limit))
	}
	if len(s.attrs) > 0 {
		s.Span.SetAttributes(s.attrs...)
	}
	s.End(trace.WithTimestamp(time.Unix(0, t)))
}
