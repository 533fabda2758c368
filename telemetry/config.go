package telemetry

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
)

// Config says where spans go and what they carry. The OTLP variables of
// the OpenTelemetry specification fill in what the flags leave out:
// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _PROTOCOL, _TIMEOUT,
// _COMPRESSION and _CERTIFICATE (read by the exporters themselves),
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
type Config struct {
	// Endpoint is --otlp: the collector's base URL (http://host:4318 for
	// OTLP/HTTP, where /v1/traces is added; http://host:4317 for gRPC).
	// Empty takes the environment's.
	Endpoint string
	// Protocol is grpc, http/protobuf or http/json; empty takes
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL,
	// else http/protobuf.
	Protocol string
	// Bodies attaches redacted message bodies (--otlp-bodies).
	Bodies bool
	// Redact adds to the default redaction rules.
	Redact capture.RedactOptions
	// Version is acpscope's, for service.version.
	Version string
	// FlushTimeout bounds the wait for the last spans when the capture
	// ends (default DefaultFlushTimeout): a backend that is down or slow
	// costs the proxy at most this much at exit.
	FlushTimeout time.Duration
	// QueueSize bounds the spans waiting for export (default 8192);
	// spans that do not fit are lost and counted.
	QueueSize int
	// Warn receives the one line said when spans start being lost; the
	// caller adds its program prefix. Nil discards.
	Warn func(string)
	// Getenv reads the environment (default os.Getenv); tests set it.
	Getenv func(string) string
}

// DefaultFlushTimeout is Config.FlushTimeout's default.
const DefaultFlushTimeout = 3 * time.Second

// ErrConfig marks a setting that cannot work: the user's to fix.
var ErrConfig = errors.New("bad OTLP setting")

func (c *Config) getenv(k string) string {
	if c.Getenv != nil {
		return c.Getenv(k)
	}
	return os.Getenv(k)
}

// Enabled reports whether spans are asked for: an endpoint given, or one
// set in the environment, unless OTEL_SDK_DISABLED or
// OTEL_TRACES_EXPORTER=none turn the SDK off.
func (c *Config) Enabled() bool {
	if c.Endpoint != "" {
		return true
	}
	if strings.EqualFold(c.getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(c.getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return c.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// protocol returns the OTLP protocol in force.
func (c *Config) protocol() (string, error) {
	p := c.Protocol
	if p == "" {
		p = c.getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	}
	if p == "" {
		p = c.getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "":
		return "http/protobuf", nil
	case "grpc", "http/protobuf", "http/json":
		return p, nil
	}
	return "", fmt.Errorf("%w: OTLP protocol %q: use grpc, http/protobuf or http/json", ErrConfig, p)
}

// endpointURL checks --otlp and returns the URL the exporter is given:
// for OTLP/HTTP the base URL with /v1/traces added, as the specification
// does for OTEL_EXPORTER_OTLP_ENDPOINT.
func (c *Config) endpointURL(proto string) (string, error) {
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: --otlp %q: give the collector's URL, such as http://localhost:4318 (OTLP/HTTP) or http://localhost:4317 with --otlp-protocol grpc", ErrConfig, c.Endpoint)
	}
	if proto != "grpc" {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// Where names the destination for messages and the capture's notes:
// never its credentials (user info, query) or headers.
func (c *Config) Where() string {
	e := c.Endpoint
	if e == "" {
		e = c.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	}
	if e == "" {
		e = c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	u, err := url.Parse(e)
	if err != nil || u.Host == "" {
		return "the OTLP endpoint"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

func (c *Config) defaults() {
	if c.FlushTimeout <= 0 {
		c.FlushTimeout = DefaultFlushTimeout
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 8192
	}
	if c.Warn == nil {
		c.Warn = func(string) {}
	}
}
