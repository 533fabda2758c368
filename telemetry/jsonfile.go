package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/acpscope/acpscope/capture"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
)

// OTLP JSON to a file (--format otlp-json): the SDK's own OTLP/HTTP
// exporter, set to its JSON encoding, hands each export request to an
// in-process transport that writes the request body as one line. The
// file thus holds exactly what the exporter would send, encoded by the
// SDK as the OTLP specification asks (hex ids, enum numbers), one
// ExportTraceServiceRequest per line: the JSON Lines layout of the
// Collector's file exporter and its otlpjsonfile receiver.

// StartFile builds a pipeline that writes OTLP JSON lines to w.
func StartFile(cfg Config, meta capture.Meta, capturePath string, w io.Writer) (*Pipeline, error) {
	cfg.defaults()
	ft := &fileTransport{w: w}
	exp, err := otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL("http://otlp-json.file.invalid/v1/traces"),
		otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON),
		otlptracehttp.WithCompression(otlptracehttp.NoCompression),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
		otlptracehttp.WithHTTPClient(&http.Client{Transport: ft}))
	if err != nil {
		return nil, err
	}
	// A file takes whatever it is given: no span is ever dropped for
	// want of room.
	cfg.QueueSize = 1 << 20
	return newPipeline(cfg, "the file", exp, meta, capturePath), nil
}

// fileTransport is the http.RoundTripper behind StartFile: it never
// touches the network.
type fileTransport struct {
	mu sync.Mutex
	w  io.Writer
}

func (t *fileTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var line bytes.Buffer
	if err := json.Compact(&line, body); err != nil {
		return nil, fmt.Errorf("the exporter's OTLP JSON did not parse: %w", err)
	}
	line.WriteByte('\n')
	t.mu.Lock()
	_, err = t.w.Write(line.Bytes())
	t.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("writing OTLP JSON: %w", err)
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(strings.NewReader("{}")),
		Request: req, ContentLength: 2,
	}, nil
}
