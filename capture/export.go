package capture

// Export writes one session of a capture to a new capture file, the bug
// report a user attaches to an issue, redacted unless told otherwise.

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// ExportOptions tune Export and the other exporters.
type ExportOptions struct {
	// Session picks the session to export; "" exports the only one (or
	// everything when the capture has no session at all).
	Session string
	// AllSessions exports every session when Session is "", where an
	// export would otherwise ask which: for formats that show a whole
	// capture, like the HTML report and HAR.
	AllSessions bool
	// NoRedact writes secrets as they were.
	NoRedact bool
	// Redact adds rules to the default ones.
	Redact RedactOptions
	// SourceName is recorded in the export's metadata (a file name).
	SourceName string
	// Progress, when set, is called every few thousand records.
	Progress func(done, total uint64)
}

// ExportResult says what an export wrote.
type ExportResult struct {
	Session    string
	Records    int
	Redactions []Redaction // seqs are the source capture's
}

// Export writes the selected session of src to a new capture at dst,
// redacted unless opts.NoRedact. dst must not exist.
func Export(src Source, dst string, opts ExportOptions) (ExportResult, error) {
	ex, err := NewExporter(src, opts)
	if err != nil {
		return ExportResult{}, err
	}
	w, err := Create(dst, copyOptions(ex.Meta()))
	if err != nil {
		return ex.Result(), fmt.Errorf("creating the export: %w", err)
	}
	cp := newCopier(w)
	if err := ex.Each(false, cp.put); err != nil {
		w.Close()
		os.Remove(dst)
		return ex.Result(), err
	}
	res := ex.Result()
	list, _ := json.Marshal(res.Redactions)
	w.UpdateMeta(func(m *Meta) {
		m.Notes["redactions"] = string(list)
		m.Notes["session"] = ex.Session()
	})
	if err := cp.finish(); err != nil {
		os.Remove(dst)
		return res, err
	}
	return res, nil
}

// redactRecord redacts rec for an export; with --no-redact it only
// relabels credential fingerprints, which no export carries.
func redactRecord(red *Redactor, rec *Record, opts ExportOptions) []Redaction {
	if opts.NoRedact {
		red.Relabel(rec)
		return nil
	}
	return red.Record(rec)
}

// exportMeta is the source's metadata, redacted, with notes on where the
// export came from and whether it is redacted. A command line carries
// secrets as often as a message does (--auth-token, an upstream URL with
// a password).
func exportMeta(src Meta, red *Redactor, opts ExportOptions) (Meta, []Redaction) {
	m := src
	m.Notes = map[string]string{}
	for k, v := range src.Notes {
		m.Notes[k] = v
	}
	m.Notes["exportedFrom"] = opts.SourceName
	m.Notes["exportedAt"] = time.Now().UTC().Format(time.RFC3339)
	if opts.NoRedact {
		m.Notes["redacted"] = "no (--no-redact)"
		return m, nil
	}
	m.Notes["redacted"] = "yes"
	var found []Redaction
	m.Argv, found = red.Argv(src.Argv)
	for i := range found {
		found[i].Path = "meta." + found[i].Path
	}
	text := func(where string, s *string) {
		if rule := red.textField(s); rule != "" {
			found = append(found, Redaction{Path: where, Rule: rule})
		}
	}
	text("meta.upstream", &m.Upstream)
	text("meta.listen", &m.Listen)
	text("meta.cwd", &m.Cwd)
	if src.Exit != nil {
		exit := *src.Exit
		text("meta.exit.error", &exit.Error)
		m.Exit = &exit
	}
	for _, k := range sortedKeys(m.Notes) {
		v := m.Notes[k]
		text("meta.notes."+k, &v)
		m.Notes[k] = v
	}
	return m, found
}
