package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/protocol"
	flag "github.com/spf13/pflag"
)

// lintHelp is `acpscope lint`'s synopsis, examples and flags.
func lintHelp() help {
	return help{
		usage: "[flags] [CAPTURE]",
		example: `  acpscope lint                                      # the latest capture: findings as text; exit 1 when any is an error, 2 when it cannot lint
  acpscope lint --min-severity warning cap.acpscope  # hide info findings
  acpscope lint --session sess_abc --format json cap.acpscope | jq .
  acpscope lint --schema=schema/v1/schema.json cap.acpscope  # also validate against the ACP schema
  acpscope lint --schema cap.acpscope                # the official schema, found: $ACPSCOPE_SCHEMA,
                                                     # node_modules/@agentclientprotocol/sdk upward, npm root -g
  acpscope lint --rules                              # list every rule`,
		setup: func(fs *flag.FlagSet) {
			fs.String("session", "", "only findings about this ACP session's messages")
			fs.String("format", "text", "output format: text or json")
			fs.String("min-severity", "info", "hide findings below this severity: info, warning or error")
			fs.String("schema", "", "also validate each message against this ACP JSON schema file; without =FILE, against the official one wherever it is installed")
			fs.Lookup("schema").NoOptDefVal = autoSchema
			fs.Bool("rules", false, "list the rules and exit")
			fs.Bool("no-save", false, "do not store the findings in the capture")
			fs.String("dir", "", "capture directory used to resolve names (default $ACPSCOPE_DIR or ~/.local/state/acpscope/captures)")
		},
	}
}

type lintFlags struct {
	session, format, schema string
	min                     protocol.Severity
	rules, noSave           bool
}

func readLintFlags(fs *flag.FlagSet) (lintFlags, error) {
	var f lintFlags
	f.session, _ = fs.GetString("session")
	f.format, _ = fs.GetString("format")
	f.schema, _ = fs.GetString("schema")
	f.rules, _ = fs.GetBool("rules")
	f.noSave, _ = fs.GetBool("no-save")
	if f.format != "text" && f.format != "json" {
		return f, usageErrorf("--format must be text or json, got %q", f.format)
	}
	min, _ := fs.GetString("min-severity")
	sev, err := protocol.ParseSeverity(min)
	if err != nil {
		return f, usageErrorf("--min-severity: %v", err)
	}
	f.min = sev
	return f, nil
}

func runLint(fs *flag.FlagSet, args []string) (int, error) {
	f, err := readLintFlags(fs)
	if err != nil {
		return 2, err
	}
	if f.rules {
		return 0, printRules(os.Stdout, f.format)
	}
	if f.schema == autoSchema && len(args) > 0 && strings.HasSuffix(args[0], ".json") {
		f.schema, args = args[0], args[1:] // --schema FILE, as before it took an optional value
	}
	var schema *protocol.SchemaValidator
	if f.schema != "" && f.schema != autoSchema {
		if schema, err = protocol.NewSchemaValidator(f.schema); err != nil {
			return 2, usageErrorf("--schema: %v", err)
		}
	}
	path, err := oneCapture(fs, args)
	if err != nil {
		return 2, err
	}
	code, err := lintCapture(os.Stdout, os.Stderr, path, f, schema)
	return code, pickedNewest(args, err)
}

// lintCapture lints the capture at path, stores the findings unless told
// not to, prints those that pass the filters and returns the exit code:
// 1 when an error-severity finding is shown, 2 when it cannot lint (so a
// CI gate tells a broken capture from a broken agent, as diff(1) does).
func lintCapture(stdout, stderr io.Writer, path string, f lintFlags, schema *protocol.SchemaValidator) (int, error) {
	msgs, sessions, finished, live, err := loadLintMsgs(path)
	if err != nil {
		return 2, err
	}
	if f.session != "" && !hasSessionRecord(sessions, f.session) {
		return 2, usageErrorf("no session %q in the capture (sessions: %s)", f.session, strings.Join(sessionList(sessions), ", "))
	}
	if schema == nil && f.schema == autoSchema {
		if schema, err = officialSchema(stderr, msgs, systemSchemaLookup()); err != nil {
			return 2, err
		}
	}
	all := protocol.Lint(msgs, protocol.LintOptions{Finished: finished, Schema: schema})
	if live {
		fmt.Fprintln(stderr, "acpscope lint: the capture is still being written: linted the records it held when lint started (and any since), findings not stored")
	} else if !f.noSave {
		if err := capture.SaveFindings(path, all); err != nil {
			fmt.Fprintf(stderr, "acpscope lint: findings not stored in the capture: %v\n", err)
		}
	}
	shown := filterFindings(all, f.min, f.session, sessions)
	if err := printFindings(stdout, f.format, shown); err != nil {
		return 2, err
	}
	for _, fd := range shown {
		if fd.Severity == protocol.Error {
			return 1, nil
		}
	}
	return 0, nil
}

// loadLintMsgs reads every record of a capture with its bytes. A capture
// a running proxy still writes is read through its live feed, at least
// up to where it stood when lint started, and counts as unfinished. It returns each record's session too,
// for --session.
func loadLintMsgs(path string) (msgs []protocol.Msg, sessions map[uint64]string, finished, live bool, err error) {
	var src capture.Source
	r, err := capture.Open(path)
	switch {
	case errors.Is(err, capture.ErrLive):
		live = true
		if src, err = capture.OpenComplete(path); err != nil {
			return nil, nil, false, true, err
		}
	case err != nil:
		return nil, nil, false, false, err
	default:
		src = r
	}
	defer src.Close()
	sessions = map[uint64]string{}
	var bodyErr error
	scanErr := src.Scan(1, func(rec *capture.Record) bool {
		m := rec.Msg
		if rec.Session != "" {
			sessions[rec.Seq] = rec.Session
		}
		if m.Body, bodyErr = src.Body(rec.Seq); bodyErr != nil {
			bodyErr = fmt.Errorf("reading record %d: %w", rec.Seq, bodyErr)
			return false
		}
		msgs = append(msgs, m)
		return true
	})
	if err := errors.Join(scanErr, bodyErr); err != nil {
		return nil, nil, false, live, err
	}
	return msgs, sessions, !live && !src.Meta().End.IsZero(), live, nil
}

// filterFindings keeps findings at or above min and, with a session,
// those naming at least one of that session's records.
func filterFindings(fs []protocol.Finding, min protocol.Severity, session string, sessions map[uint64]string) []protocol.Finding {
	var out []protocol.Finding
	for _, f := range fs {
		if f.Severity < min {
			continue
		}
		if session != "" && !findingInSession(f, session, sessions) {
			continue
		}
		out = append(out, f)
	}
	return out
}

func hasSessionRecord(sessions map[uint64]string, session string) bool {
	for _, s := range sessions {
		if s == session {
			return true
		}
	}
	return false
}

// sessionList returns the sessions in order of first appearance.
func sessionList(sessions map[uint64]string) []string {
	seqs := make([]uint64, 0, len(sessions))
	for seq := range sessions {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	var out []string
	seen := map[string]bool{}
	for _, seq := range seqs {
		if s := sessions[seq]; !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func findingInSession(f protocol.Finding, session string, sessions map[uint64]string) bool {
	for _, s := range f.Seqs {
		if sessions[s] == session {
			return true
		}
	}
	return false
}

func printFindings(w io.Writer, format string, fs []protocol.Finding) error {
	if format == "json" {
		if fs == nil {
			fs = []protocol.Finding{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(fs)
	}
	sorted := append([]protocol.Finding(nil), fs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Severity != sorted[j].Severity {
			return sorted[i].Severity > sorted[j].Severity
		}
		return sorted[i].Rule < sorted[j].Rule
	})
	counts := map[protocol.Severity]int{}
	for _, f := range sorted {
		counts[f.Severity]++
		if _, err := fmt.Fprintf(w, "%-7s %s seq=%s %s (%s)\n", strings.ToUpper(f.Severity.String()), f.Rule, seqList(f.Seqs), f.Message, f.Ref); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d errors, %d warnings, %d info\n", counts[protocol.Error], counts[protocol.Warning], counts[protocol.Info])
	return err
}

func seqList(seqs []uint64) string {
	parts := make([]string, len(seqs))
	for i, s := range seqs {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ",")
}

func printRules(w io.Writer, format string) error {
	rules := protocol.Rules()
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rules)
	}
	for _, r := range rules {
		if _, err := fmt.Fprintf(w, "%-32s %-7s %s (%s)\n", r.ID, r.Severity, r.Description, r.Ref); err != nil {
			return err
		}
	}
	return nil
}

// autoSchema is --schema given without a file: find the official one.
const autoSchema = "auto"

// officialSchema finds and loads the official schema for the version the
// capture negotiated, and says on stderr which one it uses.
func officialSchema(stderr io.Writer, msgs []protocol.Msg, l schemaLookup) (*protocol.SchemaValidator, error) {
	found, err := findSchema(protocol.NegotiatedVersion(msgs), l)
	if err != nil {
		return nil, usageErrorf("--schema: %v", err)
	}
	v, err := protocol.NewSchemaValidator(found.path)
	if err != nil {
		return nil, usageErrorf("--schema: %s: %v", found.path, err)
	}
	fmt.Fprintf(stderr, "acpscope lint: %s\n", found.describe())
	return v, nil
}
