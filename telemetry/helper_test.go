package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// waitLimit bounds every wait on a condition: generous, as the machines
// the tests run on are shared and busy.
const waitLimit = 2 * time.Minute

var testMeta = capture.Meta{Start: time.Unix(1700000000, 0), Pid: 4242, Agent: "test-agent", Transport: "stdio"}

// memPipeline is a pipeline whose exporter keeps spans in memory.
func memPipeline(t *testing.T, cfg Config) (*Pipeline, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	p := newPipeline(cfg, "memory", keepSpans{exp}, testMeta, "test.acpscope")
	t.Cleanup(func() { p.Shutdown() })
	return p, exp
}

// keepSpans keeps the in-memory exporter's spans past Shutdown, which
// would clear them.
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }

// step is one record of a scripted conversation: a message in dir, or a
// stderr line when stderr is set; at is its time in ms after the start.
type step struct {
	at     int64
	dir    wire.Dir
	line   string
	stderr bool
	fault  *protocol.Fault // what acpscope did to it, if anything
}

func client(at int64, line string) step { return step{at: at, dir: wire.DirClient, line: line} }
func agent(at int64, line string) step  { return step{at: at, dir: wire.DirAgent, line: line} }
func stderr(at int64, line string) step {
	return step{at: at, dir: wire.DirAgent, line: line, stderr: true}
}

// records turns steps into capture records as the store makes them.
func records(steps []step) []capture.Record {
	var out []capture.Record
	for i, s := range steps {
		m := protocol.FromLine(uint64(i+1), s.dir, []byte(s.line))
		if s.stderr {
			m.Kind = wire.KindStderr
		}
		m.Time = testMeta.Start.Add(time.Duration(s.at) * time.Millisecond).UnixNano()
		m.Fault = s.fault
		out = append(out, capture.Record{Msg: m, Size: int64(len(s.line))})
	}
	protocol.Pair(msgsOf(out))
	return out
}

func msgsOf(recs []capture.Record) []protocol.Msg {
	msgs := make([]protocol.Msg, len(recs))
	for i := range recs {
		msgs[i] = recs[i].Msg
	}
	return msgs
}

// build runs steps through a builder and returns the spans shipped.
func build(t *testing.T, steps []step, opts BuilderOptions) tracetest.SpanStubs {
	t.Helper()
	p, exp := memPipeline(t, Config{})
	b, err := p.Builder(testMeta, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records(steps) {
		b.Record(&r)
	}
	b.Finish()
	if st := p.Shutdown(); st.Lost != 0 {
		t.Fatalf("lost %d spans: %s", st.Lost, st.Err)
	}
	return exp.GetSpans()
}

// named returns the one span called name, failing when there is not
// exactly one.
func named(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one span %q, found %d among %s", name, len(found), names(spans))
	}
	return found[0]
}

func names(spans tracetest.SpanStubs) string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return strings.Join(n, ", ")
}

// attr returns the value of key on s, as a string for comparison.
func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return "<absent>"
}

func eventAttr(e []attribute.KeyValue, key string) string {
	for _, kv := range e {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return "<absent>"
}

// isChild reports whether child's parent is parent.
func isChild(child, parent tracetest.SpanStub) bool {
	return child.Parent.SpanID() == parent.SpanContext.SpanID() && child.SpanContext.TraceID() == parent.SpanContext.TraceID()
}

// flat is a span reduced to what two builds must agree on, printable.
type flat struct {
	Name, Trace, Span, Parent, Kind, Status string
	Start, End                              int64
	Attrs                                   []string
	Events                                  []string
}

// flatten sorts spans by id and reduces them for comparison.
func flatten(spans tracetest.SpanStubs) []flat {
	var out []flat
	for _, s := range spans {
		f := flat{Name: s.Name, Trace: s.SpanContext.TraceID().String(), Span: s.SpanContext.SpanID().String(),
			Parent: s.Parent.SpanID().String(), Kind: s.SpanKind.String(), Status: fmt.Sprint(s.Status),
			Start: s.StartTime.UnixNano(), End: s.EndTime.UnixNano()}
		for _, kv := range s.Attributes {
			f.Attrs = append(f.Attrs, string(kv.Key)+"="+kv.Value.String())
		}
		sort.Strings(f.Attrs)
		for _, e := range s.Events {
			var a []string
			for _, kv := range e.Attributes {
				a = append(a, string(kv.Key)+"="+kv.Value.String())
			}
			sort.Strings(a)
			f.Events = append(f.Events, fmt.Sprintf("%s@%d%v", e.Name, e.Time.UnixNano(), a))
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Span < out[j].Span })
	return out
}

// dump is the spans as JSON, for searching and for failure messages.
func dump(spans tracetest.SpanStubs) string { return dumpFlat(flatten(spans)) }

func dumpFlat(f []flat) string {
	b, _ := json.MarshalIndent(f, "", " ")
	return string(b)
}

// discard is an exporter that takes everything and keeps nothing.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
