package protocol

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestLintRules runs, for every rule, a capture that must trigger it and
// one that must not (testdata/lint/FAMILY/NAME.{bad,good}.jsonl).
func TestLintRules(t *testing.T) {
	for _, r := range Rules() {
		if r.ID == "schema/invalid" {
			continue // needs a schema: TestSchemaValidator
		}
		t.Run(r.ID, func(t *testing.T) {
			base := filepath.Join("testdata", "lint", filepath.FromSlash(r.ID))
			msgs, opts := loadJSONL(t, base+".bad.jsonl")
			found := Lint(msgs, opts)
			hits := withRule(found, r.ID)
			if len(hits) == 0 {
				t.Fatalf("bad capture did not trigger %s; findings:\n%s", r.ID, dump(found))
			}
			for _, f := range hits {
				if len(f.Seqs) == 0 || f.Message == "" || f.Ref != r.Ref || f.Severity != r.Severity {
					t.Errorf("malformed finding %+v", f)
				}
				for _, s := range f.Seqs {
					if s == 0 || s > uint64(len(msgs)) {
						t.Errorf("finding names seq %d outside the capture", s)
					}
				}
			}
			msgs, opts = loadJSONL(t, base+".good.jsonl")
			if found := Lint(msgs, opts); len(withRule(found, r.ID)) > 0 {
				t.Fatalf("good capture triggered %s:\n%s", r.ID, dump(found))
			}
		})
	}
}

// TestLintGoodCapturesAreClean keeps the near-miss captures honest: most
// must lint without any finding at all, so they show correct traffic.
func TestLintGoodCapturesAreClean(t *testing.T) {
	// Rules whose good capture necessarily shows something else.
	allowed := map[string][]string{
		"jsonrpc/unanswered":            {"jsonrpc/unanswered"}, // not finished: nothing to report, checked below
		"stdio/non-json-stdin":          nil,
		"batch/empty-reply":             {"batch/empty", "batch/v1"},
		"batch/empty-array-reply":       {"batch/v1"},
		"batch/notification-reply":      {"batch/v1"},
		"batch/all-notifications-reply": {"batch/v1"},
		"batch/invalid-entry":           {"batch/v1"},
		"batch/invalid-entry-reply":     {"batch/v1", "batch/invalid-entry", "jsonrpc/invalid-message"},
		"batch/lifecycle":               {"batch/v1"},
		"batch/reply-not-array":         {"batch/v1"},
		"batch/missing-response":        {"batch/v1"},
		"jsonrpc/unreadable-reply-code": {"jsonrpc/invalid-message"},
		"batch/v1":                      nil,
		"batch/empty":                   {"batch/v1"},
		"http/batch":                    {"batch/v1"},
		"jsonrpc/reply-to-notification": {"stdio/non-json-stdin"},
		"acp/unknown-update":            nil,
		"http/content-type":             nil,
		"http/accept":                   nil,
		"http/missing-connection-id":    nil,
		"http/unknown-connection":       nil,
		"http/delete-status":            nil,
		"acp/version-negotiation":       nil,
		"jsonrpc/request-null-id":       nil,
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "lint", "*", "*.good.jsonl"))
	if len(files) < len(Rules())-1 {
		t.Fatalf("only %d good captures for %d rules", len(files), len(Rules()))
	}
	for _, f := range files {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(f), "testdata/lint/"), ".good.jsonl")
		msgs, opts := loadJSONL(t, f)
		for _, finding := range Lint(msgs, opts) {
			ok := false
			for _, a := range allowed[id] {
				ok = ok || a == finding.Rule
			}
			if !ok {
				t.Errorf("%s: unexpected %s: %s", f, finding.Rule, finding.Message)
			}
		}
	}
}

func TestRulesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] || r.Description == "" || r.Ref == "" || !strings.Contains(r.ID, "/") {
			t.Errorf("bad rule %+v", r)
		}
		seen[r.ID] = true
		if _, err := os.Stat(filepath.Join("testdata", "lint", r.ID+".bad.jsonl")); err != nil && r.ID != "schema/invalid" {
			t.Errorf("rule %s has no test capture", r.ID)
		}
	}
}

// TestLintFixtures lints real traffic; the expected rule ids per fixture
// are written down here and explained.
func TestLintFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		// The handshake sweeps pipeline session/new and a prompt for a
		// made-up session "s1" before initialize is answered.
		{"codex-acp-0.16.0.json", []string{"acp/not-initialized", "acp/session-not-ready"}},
		{"gemini-cli-0.46.0.json", []string{"acp/not-initialized", "acp/session-not-ready"}},
		// opencode and qwen never answer session/new (the sweep ended).
		{"opencode-1.17.4.json", []string{"acp/not-initialized", "acp/session-not-ready", "jsonrpc/unanswered"}},
		{"qwen-code-0.17.1.json", []string{"acp/not-initialized", "acp/session-not-ready", "jsonrpc/unanswered"}},
		// cursor waits for each answer: clean.
		{"cursor-cli-2026.05.16.json", nil},
		// goose sends usage and command updates before its session/new
		// answer, and WebStorm's lines put "jsonrpc" last (fine).
		{"goose-1.37.0.json", []string{"acp/update-before-session"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			msgs := loadDevtools(t, tt.file)
			got := ruleSet(Lint(msgs, LintOptions{Finished: true}))
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("rules %v, want %v\n%s", got, tt.want, dump(Lint(msgs, LintOptions{Finished: true})))
			}
		})
	}
}

func TestLintMinSeverity(t *testing.T) {
	msgs, opts := loadJSONL(t, filepath.Join("testdata", "lint", "stdio", "crlf.bad.jsonl"))
	if len(Lint(msgs, opts)) == 0 {
		t.Fatal("no findings at info level")
	}
	opts.MinSeverity = Warning
	if got := Lint(msgs, opts); len(got) != 0 {
		t.Errorf("info findings kept at warning level: %v", got)
	}
}

func withRule(fs []Finding, id string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Rule == id {
			out = append(out, f)
		}
	}
	return out
}

func ruleSet(fs []Finding) []string {
	set := map[string]bool{}
	for _, f := range fs {
		set[f.Rule] = true
	}
	var out []string
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s seq=%v %s\n", f.Severity, f.Rule, f.Seqs, f.Message)
	}
	return b.String()
}

// TestLintPerConnection: two connections of one capture reuse ids and
// each initializes; neither is a finding.
func TestLintPerConnection(t *testing.T) {
	msgs, opts := loadJSONL(t, filepath.Join("testdata", "lint", "two-connections.jsonl"))
	if got := Lint(msgs, opts); len(got) != 0 {
		t.Errorf("findings on two clean connections:\n%s", dump(got))
	}
	for i := range msgs {
		msgs[i].Conn = 0 // as one connection, the ids collide
	}
	if got := withRule(Lint(msgs, opts), "jsonrpc/duplicate-id"); len(got) == 0 {
		t.Error("colliding ids on one connection not reported")
	}
	if tr := BuildTranscript(msgs); len(tr.Sessions) != 2 {
		t.Errorf("%d sessions, want 2", len(tr.Sessions))
	}
}
