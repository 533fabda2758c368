package telemetry

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Pipeline ships one capture's spans: the SDK's TracerProvider with a
// batch span processor, whose bounded queue drops what does not fit,
// before an OTLP exporter. Spans the queue drops or the backend does not
// take are lost and counted; nothing here ever waits for the backend
// except Shutdown, for at most Config.FlushTimeout.
type Pipeline struct {
	cfg   Config
	where string
	tp    *sdktrace.TracerProvider
	raw   sdktrace.SpanExporter // the OTLP exporter itself
	exp   *countingExporter
	proc  *countingProcessor

	shutOnce sync.Once
	stats    Stats
}

// Stats count a pipeline's spans.
type Stats struct {
	Spans int64  // spans ended
	Sent  int64  // spans the backend took
	Lost  int64  // spans dropped by the queue or refused by the backend
	Err   string // the first export error, if any
}

// maxBatch is the batch processor's export size (the SDK's default).
const maxBatch = 512

// silenceOnce replaces the SDK's global error handler and logger, which
// print every failed export to stderr: the pipeline counts the losses
// and says so once itself.
var silenceOnce sync.Once

// Start builds a pipeline that sends spans over OTLP as cfg and the
// environment say. capturePath names the capture in the resource.
func Start(cfg Config, meta capture.Meta, capturePath string) (*Pipeline, error) {
	cfg.defaults()
	proto, err := cfg.protocol()
	if err != nil {
		return nil, err
	}
	exp, err := newExporter(&cfg, proto)
	if err != nil {
		return nil, err
	}
	return newPipeline(cfg, cfg.Where(), exp, meta, capturePath), nil
}

// newExporter makes the OTLP exporter for proto. It connects lazily: a
// backend that is down shows as failed exports, not as an error here.
func newExporter(cfg *Config, proto string) (sdktrace.SpanExporter, error) {
	ctx := context.Background()
	if proto == "grpc" {
		var opts []otlptracegrpc.Option
		if cfg.Endpoint != "" {
			u, err := cfg.endpointURL(proto)
			if err != nil {
				return nil, err
			}
			opts = append(opts, otlptracegrpc.WithEndpointURL(u))
		}
		opts = append(opts, otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true,
			InitialInterval: retry.InitialInterval, MaxInterval: retry.MaxInterval, MaxElapsedTime: retry.MaxElapsedTime}))
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	if cfg.Endpoint != "" {
		u, err := cfg.endpointURL(proto)
		if err != nil {
			return nil, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	if proto == "http/json" {
		opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	opts = append(opts, otlptracehttp.WithRetry(retry))
	return otlptracehttp.New(ctx, opts...)
}

// retry keeps retrying a failed export short: past a few seconds the
// queue behind it fills and drops anyway.
var retry = otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond,
	MaxInterval: 2 * time.Second, MaxElapsedTime: 5 * time.Second}

// newPipeline wraps exp with the counting and the batch processor.
func newPipeline(cfg Config, where string, exp sdktrace.SpanExporter, meta capture.Meta, capturePath string) *Pipeline {
	cfg.defaults()
	silenceOnce.Do(func() {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
		otel.SetLogger(logr.Discard())
	})
	p := &Pipeline{cfg: cfg, where: where, raw: exp}
	p.exp = &countingExporter{SpanExporter: exp, p: p}
	bsp := sdktrace.NewBatchSpanProcessor(p.exp, sdktrace.WithMaxQueueSize(cfg.QueueSize),
		sdktrace.WithMaxExportBatchSize(maxBatch), sdktrace.WithBatchTimeout(time.Second))
	p.proc = &countingProcessor{SpanProcessor: bsp, p: p}
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p.proc), sdktrace.WithIDGenerator(idGenerator{}),
		sdktrace.WithResource(newResource(cfg, meta, capturePath)))
	return p
}

// newResource describes acpscope and the capture. OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES win over the defaults.
func newResource(cfg Config, meta capture.Meta, capturePath string) *resource.Resource {
	attrs := []resource.Option{resource.WithSchemaURL(semconv.SchemaURL), resource.WithAttributes(
		semconv.ServiceName("acpscope"), semconv.ServiceVersion(cfg.Version),
		keyTransport.String(meta.Transport), keyAgentName.String(meta.Agent))}
	if capturePath != "" {
		attrs = append(attrs, resource.WithAttributes(keyCapture.String(filepath.Base(capturePath))))
	}
	attrs = append(attrs, resource.WithTelemetrySDK(), resource.WithFromEnv())
	res, err := resource.New(context.Background(), attrs...)
	if err != nil && res == nil { // a malformed OTEL_RESOURCE_ATTRIBUTES: keep ours
		res, _ = resource.New(context.Background(), attrs[:2]...)
	}
	return res
}

// Builder returns the span builder of the capture meta describes, whose
// spans this pipeline ships.
func (p *Pipeline) Builder(meta capture.Meta, opts BuilderOptions) (*Builder, error) {
	tracer := p.tp.Tracer("github.com/acpscope/acpscope/telemetry",
		trace.WithInstrumentationVersion(p.cfg.Version), trace.WithSchemaURL(semconv.SchemaURL))
	return newBuilder(tracer, meta, opts)
}

// Shutdown sends what is queued, waiting at most FlushTimeout, cuts off
// exports still under way, and returns the counts. Idempotent.
func (p *Pipeline) Shutdown() Stats {
	p.shutOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.FlushTimeout)
		defer cancel()
		if err := p.tp.Shutdown(ctx); err != nil && errors.Is(err, context.DeadlineExceeded) {
			// The backend hangs: stopping the exporter cancels the export
			// the batch processor still waits for, so its goroutine ends.
			stop, cancelStop := context.WithTimeout(context.Background(), time.Second)
			p.raw.Shutdown(stop)
			cancelStop()
			p.exp.fail(fmt.Errorf("%s did not take the last spans within %v", p.where, p.cfg.FlushTimeout))
		}
		p.stats = p.counts()
		if p.stats.Lost > 0 {
			p.cfg.Warn(fmt.Sprintf("OTLP: %d of %d spans were lost (%s); forwarding and capture were not held up",
				p.stats.Lost, p.stats.Spans, p.stats.Err))
		}
	})
	return p.stats
}

// counts returns the running counts.
func (p *Pipeline) counts() Stats {
	s := Stats{Spans: p.proc.ended.Load(), Sent: p.exp.sent.Load()}
	s.Lost = s.Spans - s.Sent
	if e := p.exp.firstErr.Load(); e != nil {
		s.Err = *e
	} else if s.Lost > 0 {
		s.Err = "the export queue was full"
	}
	return s
}

// Notes are what the capture's Meta.Notes say about its spans.
func (s Stats) Notes(where string, skipped uint64) map[string]string {
	n := map[string]string{
		"otlp.endpoint": where,
		"otlp.spans":    fmt.Sprintf("%d sent, %d lost", s.Sent, s.Lost),
	}
	if s.Err != "" {
		n["otlp.error"] = s.Err
	}
	if skipped > 0 {
		n["otlp.skipped"] = strconv.FormatUint(skipped, 10) + " records not turned into spans: the span builder was still behind when the capture closed"
	}
	return n
}

// countingProcessor counts the spans handed to the batch processor and
// notices when its queue must have dropped some.
type countingProcessor struct {
	sdktrace.SpanProcessor
	p     *Pipeline
	ended atomic.Int64
}

func (c *countingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return // a traceparent that says not to sample
	}
	n := c.ended.Add(1)
	c.SpanProcessor.OnEnd(s)
	// The batch processor holds at most its queue and one batch: more
	// spans than that neither sent nor failed means it dropped some.
	if n-c.p.exp.sent.Load()-c.p.exp.failed.Load() > int64(c.p.cfg.QueueSize+maxBatch) {
		c.p.exp.fail(errors.New("the export queue was full: the backend does not keep up"))
	}
}

// countingExporter counts what the backend took and what it did not,
// and says once when spans start being lost.
type countingExporter struct {
	sdktrace.SpanExporter
	p        *Pipeline
	sent     atomic.Int64
	failed   atomic.Int64
	firstErr atomic.Pointer[string]
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		c.failed.Add(int64(len(spans)))
		c.fail(err)
		return err
	}
	c.sent.Add(int64(len(spans)))
	return nil
}

// fail says the first loss, once.
func (c *countingExporter) fail(err error) {
	msg := err.Error()
	if c.firstErr.CompareAndSwap(nil, &msg) {
		c.p.cfg.Warn(fmt.Sprintf("OTLP: spans to %s are being lost: %s; forwarding and capture go on, and the count is kept in the capture's notes",
			c.p.where, msg))
	}
}
