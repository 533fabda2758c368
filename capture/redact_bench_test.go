package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/acpscope/acpscope/wire"
)

// BenchmarkRedact measures Message on large messages against the
// redactor it replaced (oldRedactor, kept below as it was), in the same
// run: compare ns/op of new/ with old/ per message.
func BenchmarkRedact(b *testing.B) {
	cur, _ := NewRedactor(RedactOptions{})
	old := newOldRedactor()
	for _, m := range benchMessages() {
		b.Run("new/"+m.name, func(b *testing.B) {
			b.SetBytes(int64(len(m.body)))
			for b.Loop() {
				cur.Message(m.method, m.body)
			}
		})
		b.Run("old/"+m.name, func(b *testing.B) {
			b.SetBytes(int64(len(m.body)))
			for b.Loop() {
				old.Message(m.method, m.body)
			}
		})
	}
}

type benchMessage struct {
	name, method string
	body         []byte
}

// benchMessages are about 1 MiB each: an agent's prose, a file written,
// and a tool result of many small objects, each with one secret.
func benchMessages() []benchMessage {
	var prose strings.Builder
	for prose.Len() < 1<<20 {
		prose.WriteString("The token: budget, the key idea, see https://example.com/docs#auth - a list of steps; ")
		prose.WriteString("run `go test ./...` then `git push -u origin main`. ")
	}
	var code strings.Builder
	for code.Len() < 1<<20 {
		code.WriteString("func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tif err := s.auth(r.Header.Get(\"Authorization\")); err != nil {\n\t\thttp.Error(w, err.Error(), 401)\n\t}\n}\n")
	}
	code.WriteString("const apiKey = \"" + fakeOpenAI + "\"\n")
	var rows strings.Builder
	rows.WriteString(`{"jsonrpc":"2.0","id":7,"result":{"content":[`)
	for i := 0; rows.Len() < 1<<20; i++ {
		fmt.Fprintf(&rows, `{"type":"text","text":"row %d","path":"/w/src/file%d.go","line":%d,"kind":"match"},`, i, i, i)
	}
	rows.WriteString(`{"type":"text","text":"` + fakeGitHub + `"}]}}`)
	text := func(s string) []byte {
		q, _ := json.Marshal(s)
		return q
	}
	return []benchMessage{
		{"prose", "session/update", fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%s}}}}`, text(prose.String()+fakeAnthropic))},
		{"file", "fs/write_text_file", fmt.Appendf(nil, `{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/w/server.go","content":%s}}`, text(code.String()))},
		{"rows", "session/prompt", []byte(rows.String())},
	}
}

// oldRedactor is Message, secretRule, Text and redactString as they
// were before redaction looked everywhere, for BenchmarkRedact's
// comparison.
type oldRedactor struct {
	patterns []*regexp.Regexp
}

var oldMCPMethods = map[string]bool{
	"session/new": true, "session/load": true, "session/resume": true, "session/fork": true,
}

func (r *oldRedactor) secretRule(method string, path []string) string {
	n := len(path)
	switch {
	case n == 0:
		return ""
	case method == "authenticate" && n == 1 && path[0] == "params":
		return "authenticate params"
	case oldMCPMethods[method] && n == 4 && path[0] == "params" && path[1] == "mcpServers" &&
		(path[3] == "env" || path[3] == "headers"):
		return "mcpServers " + path[3]
	case method == "initialize" && n == 3 && path[0] == "params" && path[1] == "_meta" &&
		strings.Contains(strings.ToLower(path[2]), "gateway"):
		return "initialize gateway token"
	}
	if credentialKey.MatchString(path[n-1]) && underMeta(path[:n-1]) {
		return "_meta credential key"
	}
	if strings.EqualFold(path[n-1], "headers") && underMeta(path[:n-1]) {
		return "_meta headers"
	}
	return ""
}

var oldPatterns = []string{
	`sk-[A-Za-z0-9_\-]{8,}`,
	`(?i)bearer\s+(?P<secret>[A-Za-z0-9._~+/=\-]{8,})`,
	`(?i)basic\s+(?P<secret>[A-Za-z0-9+/=]{12,})`,
	`gh[pousr]_[A-Za-z0-9]{16,}`,
	`github_pat_[A-Za-z0-9_]{16,}`,
	`xox[abprs]-[A-Za-z0-9\-]{8,}`,
	`AKIA[0-9A-Z]{16}`,
	`AIza[0-9A-Za-z_\-]{30,}`,
	`(?i)(?:api[_-]?key|token|secret|password|passwd)["']?\s*[=:]\s*["']?(?P<secret>[^\s"',;]{6,})`,
}

func newOldRedactor() *oldRedactor {
	o := &oldRedactor{}
	for _, p := range oldPatterns {
		o.patterns = append(o.patterns, regexp.MustCompile(p))
	}
	return o
}

func (r *oldRedactor) Message(method string, body []byte) ([]byte, []Redaction) {
	if !json.Valid(body) {
		out, n := r.Text(body)
		if n == 0 {
			return body, nil
		}
		return out, []Redaction{{Path: "(text)", Rule: "pattern"}}
	}
	var (
		edits      []Edit
		found      []Redaction
		secretEnd  int
		secretRule string
	)
	batch := bytes.TrimLeft(body, " \t\r\n")[0] == '['
	_ = WalkJSON(body, func(path []string, start, end int) bool {
		m, rel := method, path
		if batch {
			if len(path) == 0 {
				return true
			}
			m, rel = batchMemberMethod(body, path, method), path[1:]
		}
		if start < secretEnd {
			if body[start] == '"' && !exemptKey(rel) {
				edits = append(edits, Edit{start, end, redactedLiteral})
				found = append(found, Redaction{Path: PathString(path), Rule: secretRule})
			}
			return true
		}
		if rule := r.secretRule(m, rel); rule != "" {
			switch body[start] {
			case '{', '[':
				secretEnd, secretRule = end, rule
			case '"':
				edits = append(edits, Edit{start, end, redactedLiteral})
				found = append(found, Redaction{Path: PathString(path), Rule: rule})
			default:
				if strings.HasPrefix(rule, "path ") {
					edits = append(edits, Edit{start, end, redactedLiteral})
					found = append(found, Redaction{Path: PathString(path), Rule: rule})
				}
			}
			return true
		}
		if body[start] == '"' {
			if lit, ok := r.redactString(body[start:end]); ok {
				edits = append(edits, Edit{start, end, lit})
				found = append(found, Redaction{Path: PathString(path), Rule: "pattern"})
			}
		}
		return true
	})
	return ApplyEdits(body, edits), found
}

func (r *oldRedactor) redactString(lit []byte) ([]byte, bool) {
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return nil, false
	}
	out, n := r.Text([]byte(s))
	if n == 0 {
		return nil, false
	}
	return wire.Quote(string(out)), true
}

func (r *oldRedactor) Text(b []byte) ([]byte, int) {
	n := 0
	for _, re := range r.patterns {
		group := re.SubexpIndex("secret")
		b = re.ReplaceAllFunc(b, func(m []byte) []byte {
			n++
			if group < 0 {
				return []byte(Redacted)
			}
			sub := re.FindSubmatchIndex(m)
			if sub == nil || sub[2*group] < 0 {
				return []byte(Redacted)
			}
			out := append([]byte(nil), m[:sub[2*group]]...)
			out = append(out, Redacted...)
			return append(out, m[sub[2*group+1]:]...)
		})
	}
	return b, n
}

// TestBenchMessagesRedacted keeps the benchmark honest: each message
// holds a secret both redactors find.
func TestBenchMessagesRedacted(t *testing.T) {
	cur, _ := NewRedactor(RedactOptions{})
	old := newOldRedactor()
	for _, m := range benchMessages() {
		if _, found := cur.Message(m.method, m.body); len(found) == 0 {
			t.Errorf("%s: nothing redacted", m.name)
		}
		if _, found := old.Message(m.method, m.body); len(found) == 0 {
			t.Errorf("%s: the old redactor redacted nothing", m.name)
		}
	}
}
