package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/internal/human"
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Options tune a report.
type Options struct {
	// Export selects the session and the redaction, as for every export.
	Export capture.ExportOptions
	// FoldBytes: a body larger than this is folded in the table, shown by
	// its size and its first FoldHead bytes (defaults 64 KiB and 4 KiB).
	FoldBytes, FoldHead int
	// TextBytes caps each text of the conversation (default 8 KiB); the
	// table holds the messages themselves.
	TextBytes int
	// MaxArrows caps the sequence diagram (default 400 arrows).
	MaxArrows int
	// Now is the time the report says it was made (default time.Now).
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.FoldBytes <= 0 {
		o.FoldBytes = 64 << 10
	}
	if o.FoldHead <= 0 {
		o.FoldHead = 4 << 10
	}
	if o.TextBytes <= 0 {
		o.TextBytes = 8 << 10
	}
	if o.MaxArrows <= 0 {
		o.MaxArrows = 400
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Export writes the HTML report of src to w, as the other exporters do:
// every session, or the one opts.Session names; redacted unless
// opts.NoRedact.
func Export(src capture.Source, w io.Writer, opts capture.ExportOptions) (capture.ExportResult, error) {
	opts.AllSessions = true // the report shows each session apart
	return Write(src, w, Options{Export: opts})
}

// Write writes the HTML report of src to w.
func Write(src capture.Source, w io.Writer, opts Options) (capture.ExportResult, error) {
	opts.defaults()
	ex, err := capture.NewExporter(src, opts.Export)
	if err != nil {
		return capture.ExportResult{}, err
	}
	meta := ex.Meta()
	var msgs []protocol.Msg
	var recs []capture.Record
	err = ex.Each(true, func(r *capture.Record) error {
		recs = append(recs, *r)
		if r.Kind != wire.KindStderr {
			msgs = append(msgs, r.Msg)
		}
		return nil
	})
	if err != nil {
		return ex.Result(), fmt.Errorf("reading the capture: %w", err)
	}
	p, err := build(ex, meta, recs, msgs, &opts)
	if err != nil {
		return ex.Result(), err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := page.Execute(bw, p); err != nil {
		return ex.Result(), fmt.Errorf("writing the report: %w", err)
	}
	return ex.Result(), bw.Flush()
}

// view is everything the page template shows.
type view struct {
	Title     string
	Generated string
	Capture   []fact
	Header    header
	Sessions  []sessionView
	Findings  []findingView
	Linted    string // where the findings come from
	Diagram   template.HTML
	Arrows    int // arrows drawn
	Messages  int // protocol messages, all of which the diagram would draw
	Data      template.JS
	Redacted  bool
	Version   string
	assets
}

// fact is one labelled value of a header list.
type fact struct {
	Label, Value string
}

// build turns what the export read into the page's view.
func build(ex *capture.Exporter, meta capture.Meta, recs []capture.Record, msgs []protocol.Msg, o *Options) (*view, error) {
	findings, linted, err := findingsFor(ex, meta, recs, msgs)
	if err != nil {
		return nil, err
	}
	t := protocol.BuildTranscript(msgs)
	v := &view{
		Title:     title(meta, ex.Session()),
		Generated: o.Now().UTC().Format(time.RFC3339),
		Capture:   captureFacts(meta, ex.Session(), len(recs)),
		Header:    readHeader(msgs, t),
		Sessions:  conversation(t, o.TextBytes),
		Findings:  findingViews(findings),
		Linted:    linted,
		Redacted:  ex.Redacting(),
		Version:   meta.ProxyVersion,
		assets:    inline,
	}
	v.Diagram, v.Arrows, v.Messages = diagram(msgs, o.MaxArrows)
	data, err := tableData(meta, recs, findings, o)
	if err != nil {
		return nil, err
	}
	v.Data = template.JS(data)
	return v, nil
}

// title names the report after its agent and session.
func title(meta capture.Meta, session string) string {
	parts := []string{"acpscope report"}
	if meta.Agent != "" {
		parts = append(parts, meta.Agent)
	}
	if session != "" {
		parts = append(parts, session)
	}
	return strings.Join(parts, " · ")
}

// captureFacts lists what the capture's metadata says.
func captureFacts(m capture.Meta, session string, records int) []fact {
	var fs []fact
	add := func(label, value string) {
		if value != "" {
			fs = append(fs, fact{label, value})
		}
	}
	add("agent", m.Agent)
	add("session", session)
	add("transport", m.Transport)
	add("command", strings.Join(m.Argv, " "))
	add("working directory", m.Cwd)
	add("upstream", m.Upstream)
	add("listening on", m.Listen)
	if !m.Start.IsZero() {
		add("started", m.Start.UTC().Format(time.RFC3339Nano))
	}
	if !m.End.IsZero() {
		add("ended", m.End.UTC().Format(time.RFC3339Nano))
		add("duration", m.End.Sub(m.Start).Round(time.Millisecond).String())
	}
	if m.Exit != nil {
		s := fmt.Sprintf("%d", m.Exit.Code)
		if m.Exit.Signal != "" {
			s += " (" + m.Exit.Signal + ")"
		}
		if m.Exit.Error != "" {
			s += ": " + m.Exit.Error
		}
		add("exit", s)
	}
	add("records", fmt.Sprint(records))
	if m.Loss.Messages > 0 || m.Loss.WriteErrors > 0 {
		add("lost while recording", fmt.Sprintf("%d messages, %d bytes, %d failed writes", m.Loss.Messages, m.Loss.Bytes, m.Loss.WriteErrors))
	}
	if b := m.Backlog; b.Bytes > 0 {
		add("capture behind the wire", fmt.Sprintf("up to %s waited on disk (%s in all), recorded in the end", human.Size(b.Peak), human.Size(b.Bytes)))
	}
	add("recorded by", strings.TrimSpace("acpscope "+m.ProxyVersion))
	add("exported from", m.Notes["exportedFrom"])
	add("redacted", m.Notes["redacted"])
	return fs
}

// findingsFor returns the lint findings about the exported records: those
// stored with the capture, or when it was never linted, those lint finds
// in the exported (redacted) messages now.
func findingsFor(ex *capture.Exporter, meta capture.Meta, recs []capture.Record, msgs []protocol.Msg) ([]protocol.Finding, string, error) {
	in := make(map[uint64]bool, len(recs))
	for i := range recs {
		in[recs[i].Seq] = true
	}
	stored, err := ex.Findings(func(seq uint64) bool { return in[seq] })
	if err != nil {
		return nil, "", fmt.Errorf("reading the capture's lint findings: %w", err)
	}
	if stored != nil {
		return stored, "as stored by acpscope lint", nil
	}
	found := protocol.Lint(msgs, protocol.LintOptions{Finished: !meta.End.IsZero()})
	return found, "found by lint when this report was made (the capture was never linted)", nil
}

// findingView is one finding as the page lists it.
type findingView struct {
	Severity, Rule, Message, Ref string
	Seqs                         []uint64
}

func findingViews(fs []protocol.Finding) []findingView {
	out := make([]findingView, 0, len(fs))
	for _, f := range fs {
		out = append(out, findingView{Severity: f.Severity.String(), Rule: f.Rule, Message: f.Message, Ref: f.Ref, Seqs: f.Seqs})
	}
	return out
}

// marshal encodes v as JSON safe inside a script element: encoding/json
// escapes <, > and & (so no "</script>" can appear) and U+2028/U+2029.
func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the report's data: %w", err)
	}
	return b, nil
}
