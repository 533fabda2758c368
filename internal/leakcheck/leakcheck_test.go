package leakcheck

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/har"
	"github.com/acpscope/acpscope/replay"
	"github.com/acpscope/acpscope/report"
)

// formats are the export formats a bug report can be made in. A new one
// is one more line here.
var formats = []Format{
	{Name: "capture", Export: CaptureFile(capture.Export)},
	{Name: "jsonl", Export: WithRedactions(capture.ExportJSONL)},
	{Name: "mermaid", Export: replay.ExportMermaid},
	{Name: "html", Export: WithRedactions(unescaped(report.Export))},
	{Name: "har", Export: WithRedactions(har.Export)},
}

// unescaped makes an HTML exporter's Export that also writes the page
// with its character references decoded: html/template writes "+" as
// "&#43;", which would hide a base64 secret from the needles.
func unescaped(export func(capture.Source, io.Writer, capture.ExportOptions) (capture.ExportResult, error)) func(capture.Source, io.Writer, capture.ExportOptions) (capture.ExportResult, error) {
	return func(src capture.Source, w io.Writer, opts capture.ExportOptions) (capture.ExportResult, error) {
		var page bytes.Buffer
		res, err := export(src, &page, opts)
		if err != nil {
			return res, err
		}
		_, err = fmt.Fprintf(w, "%s\n--- decoded ---\n%s", page.Bytes(), html.UnescapeString(page.String()))
		return res, err
	}
}

// TestExportsLeakNothing: no export format carries a planted secret or a
// credential fingerprint.
func TestExportsLeakNothing(t *testing.T) {
	for _, f := range formats {
		t.Run(f.Name, func(t *testing.T) { Run(t, f) })
	}
}

// TestCorpus: the corpus is as broad as promised, every secret is in the
// source capture (so a clean export means it was redacted, not lost), and
// Leaks finds each one in an export made with --no-redact.
func TestCorpus(t *testing.T) {
	c := Build(t, t.TempDir())
	kinds, places := map[string]bool{}, map[string]bool{}
	for _, s := range c.Secrets {
		kinds[s.Kind], places[s.Place] = true, true
		if !strings.Contains(s.Value, "FAKE") && !strings.Contains(s.Value, "EXAMPLE") && s.Kind != "basic credentials" {
			t.Errorf("%s in %s is not marked fake: %q", s.Kind, s.Place, s.Value)
		}
	}
	if len(c.Secrets) < 60 || len(kinds) < 15 || len(places) < 12 {
		t.Errorf("corpus: %d secrets of %d kinds in %d places, want at least 60, 15, 12", len(c.Secrets), len(kinds), len(places))
	}
	raw, err := os.ReadFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	if err := dumpCapture(c.Path, &dump); err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var unredacted bytes.Buffer
	if _, err := capture.ExportJSONL(src, &unredacted, capture.ExportOptions{Session: c.Session, NoRedact: true}); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, l := range c.Leaks(append(append(raw, dump.Bytes()...), unredacted.Bytes()...)) {
		found[l.Secret.Kind+"|"+l.Secret.Value] = true
	}
	inExport := map[string]bool{}
	for _, l := range c.Leaks(unredacted.Bytes()) {
		inExport[l.Secret.Value] = true
	}
	for _, s := range c.Secrets {
		if !found[s.Kind+"|"+s.Value] {
			t.Errorf("%s planted in %s is not in the source capture", s.Kind, s.Place)
		}
		if !inExport[s.Value] && !strings.HasPrefix(s.Place, "capture ") {
			t.Errorf("%s planted in %s is missing from an unredacted export: the session selection lost it", s.Kind, s.Place)
		}
	}
}

// TestLeaksNamesThePlace: a leak report names the secret's kind, where
// it was planted and where it leaked.
func TestLeaksNamesThePlace(t *testing.T) {
	c := &Corpus{Secrets: []Secret{{Kind: "github token", Place: "tool call rawInput", Value: "ghp_FAKEx", core: "FAKEx"}}}
	leaks := c.Leaks([]byte("line one\n{\"v\":\"ghp_FAKEx\"}\nBearer <redacted:sha256:8810ad58>"))
	if len(leaks) != 2 {
		t.Fatalf("leaks %v, want the token and the fingerprint", leaks)
	}
	if got := leaks[0].String(); !strings.Contains(got, "github token planted in tool call rawInput leaked at line 2, column 7") {
		t.Errorf("leak reads %q", got)
	}
	if !strings.Contains(leaks[1].String(), "line 3") {
		t.Errorf("fingerprint leak reads %q", leaks[1])
	}
}
