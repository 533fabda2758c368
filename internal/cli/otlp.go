package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/telemetry"
	flag "github.com/spf13/pflag"
)

// Spans over OTLP: every command that proxies takes these flags, and the
// OTEL_EXPORTER_OTLP_* variables do the same without them.

// otlpFlags declares the span flags of the commands that proxy.
func otlpFlags(fs *flag.FlagSet) {
	fs.String("otlp", "", "stream spans to this OpenTelemetry collector as the session runs, e.g. http://localhost:4318 (default: $OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.String("otlp-protocol", "", "grpc, http/protobuf or http/json (default: $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fs.Bool("otlp-bodies", false, "attach message bodies to spans, redacted")
}

// otlpConfig reads the span flags; endpointFlag names the endpoint's.
func otlpConfig(fs *flag.FlagSet, endpointFlag string) telemetry.Config {
	cfg := telemetry.Config{Version: version, Warn: warn}
	cfg.Endpoint, _ = fs.GetString(endpointFlag)
	cfg.Protocol, _ = fs.GetString("otlp-protocol")
	cfg.Bodies, _ = fs.GetBool("otlp-bodies")
	return cfg
}

// startTelemetry streams the spans of what w records, when --otlp or the
// environment asks for them. Spans are built from the capture's committed
// records on the capture's own watcher goroutine, never on the forwarding
// path. Like a capture that cannot be created, spans that cannot be sent
// never keep the editor from its agent: it says why, and goes on.
func startTelemetry(fs *flag.FlagSet, w *capture.Writer) {
	cfg := otlpConfig(fs, "otlp")
	if !cfg.Enabled() {
		return
	}
	p, err := telemetry.Start(cfg, w.Meta(), w.Path())
	if err == nil {
		err = telemetry.Watch(w, p, telemetry.BuilderOptions{Bodies: cfg.Bodies})
	}
	if err != nil {
		warn(fmt.Sprintf("NOT SENDING SPANS: %v; forwarding and capture continue", err))
		return
	}
	if quiet, _ := fs.GetBool("quiet"); !quiet {
		warn("sending spans to " + cfg.Where())
	}
}

// noCaptureNoSpans says, when --otlp was given with --no-capture, that no
// spans will come: they are built from the capture's records.
func noCaptureNoSpans(fs *flag.FlagSet) {
	if e, _ := fs.GetString("otlp"); e != "" {
		warn("--otlp sends spans built from the capture, and --no-capture records nothing: no spans will be sent (drop --no-capture)")
	}
}

// otlpExportFlags declares export's span flags.
func otlpExportFlags(fs *flag.FlagSet) {
	fs.String("otlp-endpoint", "", "--format otlp: the collector to send to, e.g. http://localhost:4318 (default: $OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.String("otlp-protocol", "", "--format otlp: grpc, http/protobuf or http/json (default: $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fs.Bool("otlp-bodies", false, "--format otlp and otlp-json: attach message bodies to spans, redacted")
}

// exportSpans runs export --format otlp (to a collector) and otlp-json
// (to a file or stdout): the spans a live run with --otlp would have
// sent, with the same ids. Spans are always redacted; --redact and
// --redact-re add to the rules.
func exportSpans(fs *flag.FlagSet, src *capture.Reader, format, out string, opts capture.ExportOptions) (int, error) {
	if opts.NoRedact {
		return 2, usageErrorf("--no-redact does not apply to spans: they are always redacted")
	}
	if format == "otlp" && fs.Changed("output") {
		return 2, usageErrorf("--format otlp sends spans to a collector (--otlp-endpoint); for a file use --format otlp-json -o FILE")
	}
	cfg := otlpConfig(fs, "otlp-endpoint")
	bopts := telemetry.BuilderOptions{Bodies: cfg.Bodies, Redact: opts.Redact}
	if _, err := capture.NewRedactor(opts.Redact); err != nil {
		return 2, usageErrorf("%v", err)
	}
	cfg.FlushTimeout = 30 * time.Second // a finished capture: worth waiting for
	if format == "otlp-json" {
		var st telemetry.Stats
		err := writeOutput(out, func(w io.Writer) error {
			p, err := telemetry.StartFile(cfg, src.Meta(), src.Path(), w)
			if err != nil {
				return err
			}
			st, err = telemetry.Export(src, p, bopts, nil)
			if err == nil && st.Lost > 0 {
				err = fmt.Errorf("%d of %d spans could not be written: %s", st.Lost, st.Spans, st.Err)
			}
			return err
		})
		if err != nil {
			return 1, err
		}
		if out != "-" {
			fmt.Fprintf(os.Stderr, "acpscope export: wrote %d spans to %s\n", st.Sent, out)
		}
		return 0, nil
	}
	if !cfg.Enabled() {
		return 2, usageErrorf("say where to send the spans: --otlp-endpoint URL (or set OTEL_EXPORTER_OTLP_ENDPOINT)")
	}
	cfg.Warn = func(string) {} // the result below says it all, once
	p, err := telemetry.Start(cfg, src.Meta(), src.Path())
	if errors.Is(err, telemetry.ErrConfig) {
		return 2, usageErrorf("%v", err)
	}
	if err != nil {
		return 1, err
	}
	st, err := telemetry.Export(src, p, bopts, nil)
	if err != nil {
		return 1, err
	}
	if st.Lost > 0 {
		return 1, fmt.Errorf("%d of %d spans did not reach %s: %s (is the collector running and listening there?)", st.Lost, st.Spans, cfg.Where(), st.Err)
	}
	fmt.Fprintf(os.Stderr, "acpscope export: sent %d spans to %s\n", st.Sent, cfg.Where())
	return 0, nil
}
