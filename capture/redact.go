package capture

// Redaction for bug-report exports (invariant 4: secrets stay home). The
// rules follow where ACP puts secrets on the wire: authenticate params,
// env and headers of mcpServers, credential-looking _meta keys, the
// JetBrains gateway token in initialize _meta, HTTP credentials in the
// envelope, and tokens printed to stderr. Only the secret values change;
// every other byte of a message stays as it was.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// Redacted is what a redacted string value becomes.
const Redacted = "<redacted>"

var redactedLiteral = []byte(`"` + Redacted + `"`)

// RedactOptions add to the default rules.
type RedactOptions struct {
	// Paths are JSON path globs (see MatchPath) whose values are
	// redacted in every message, e.g. "params.prompt.*.text".
	Paths []string
	// Patterns are regular expressions redacted from string values and
	// stderr lines. A named group "secret" limits the replacement to it.
	Patterns []string
}

// Redaction names one value that was redacted: where, never what.
type Redaction struct {
	Seq  uint64 `json:"seq"`
	Path string `json:"path"`
	Rule string `json:"rule"`
}

// Redactor applies the rules. It is safe for concurrent use.
type Redactor struct {
	paths    []string
	patterns []*regexp.Regexp
}

// credentialKey matches _meta keys that look like credentials.
var credentialKey = regexp.MustCompile(`(?i)token|secret|key|passw|auth|cookie|credential|bearer`)

// defaultPatterns find credentials in free text: API keys, bearer tokens,
// GitHub and Slack tokens, AWS and Google keys, and key=value settings.
var defaultPatterns = []string{
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

// NewRedactor compiles the default rules plus opts.
func NewRedactor(opts RedactOptions) (*Redactor, error) {
	r := &Redactor{paths: opts.Paths}
	for _, p := range append(append([]string(nil), defaultPatterns...), opts.Patterns...) {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, badOption(fmt.Errorf("redaction pattern %q: %w", p, err))
		}
		r.patterns = append(r.patterns, re)
	}
	return r, nil
}

// Message returns body with its secrets replaced, and where they were.
// method is the message's method, or for a response the method of the
// request it answers. Bodies that are not JSON get the text patterns.
func (r *Redactor) Message(method string, body []byte) ([]byte, []Redaction) {
	if !json.Valid(body) {
		out, n := r.Text(body)
		if n == 0 {
			return body, nil
		}
		return out, []Redaction{{Path: "(text)", Rule: "pattern"}}
	}
	var (
		edits []Edit
		found []Redaction
		// secretEnd: strings before this offset lie inside a secret
		// container and are redacted whole.
		secretEnd  int
		secretRule string
	)
	batch := bytes.TrimLeft(body, " \t\r\n")[0] == '['
	hop := protocol.Unwrap(&protocol.Msg{Body: body}).Hop
	_ = WalkJSON(body, func(path []string, start, end int) bool {
		m, rel := method, innerPath(path, hop)
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
				if strings.HasPrefix(rule, "path ") { // asked for by name
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

// innerPath makes a path in a proxy-chain wrapper (hop > 0) relative to
// the message it carries, whose params sit hop levels down
// (params.params.… at hop 1), so the rules that know where a method's
// secrets are find them there; a path in the wrapper itself gets a prefix
// no method's rule matches (credential keys under _meta still do).
func innerPath(path []string, hop int) []string {
	if hop == 0 {
		return path
	}
	if len(path) > hop {
		inside := true
		for _, p := range path[:hop+1] {
			inside = inside && p == "params"
		}
		if inside {
			return path[hop:]
		}
	}
	return append([]string{"(wrapper)"}, path...)
}

// batchMemberMethod finds the method of the batch element path[0].
func batchMemberMethod(body []byte, path []string, fallback string) string {
	var m string
	_ = WalkJSON(body, func(p []string, start, end int) bool {
		if len(p) == 2 && p[0] == path[0] && p[1] == "method" && body[start] == '"' {
			_ = json.Unmarshal(body[start:end], &m)
		}
		return len(p) < 2 && (len(p) == 0 || p[0] == path[0])
	})
	if m == "" {
		return fallback
	}
	return m
}

// secretRule names the rule that makes the value at path secret, or "".
func (r *Redactor) secretRule(method string, path []string) string {
	for _, p := range r.paths {
		if MatchPath(p, path) {
			return "path " + p
		}
	}
	n := len(path)
	switch {
	case n == 0:
		return ""
	case method == "authenticate" && n == 1 && path[0] == "params":
		return "authenticate params"
	case protocol.CarriesMCPServers(method) && n == 4 && path[0] == "params" && path[1] == "mcpServers" &&
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
		return "_meta headers" // proxy settings (JetBrains' proxyConfig) carry keys here
	}
	return ""
}

func underMeta(path []string) bool {
	for _, p := range path {
		if p == "_meta" {
			return true
		}
	}
	return false
}

// exemptKey keeps the names of env variables and headers ({name, value})
// and the authentication method id: they say what was there, not what it
// was, and replay needs methodId to choose the same method.
func exemptKey(path []string) bool {
	if len(path) == 0 {
		return false
	}
	last := path[len(path)-1]
	return last == "name" || (last == "methodId" && len(path) == 2)
}

// redactString applies the text patterns to a JSON string literal and
// returns the new literal when anything matched.
func (r *Redactor) redactString(lit []byte) ([]byte, bool) {
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

// Text redacts the patterns from free text (a stderr line, a non-JSON
// frame) and returns the result and the number of replacements.
func (r *Redactor) Text(b []byte) ([]byte, int) {
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

// credentialHeaders are HTTP headers whose values are never exported.
var credentialHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "cookie": true, "set-cookie": true,
	"x-api-key": true, "api-key": true,
}

// Envelope returns a copy of env with credential headers redacted, and
// the header names it redacted.
func (r *Redactor) Envelope(env *wire.Envelope) (*wire.Envelope, []string) {
	if env == nil || len(env.Headers) == 0 {
		return env, nil
	}
	out := *env
	out.Headers = make(map[string]string, len(env.Headers))
	var names []string
	for k, v := range env.Headers {
		if (credentialHeaders[strings.ToLower(k)] || credentialKey.MatchString(k)) && v != Redacted {
			v = Redacted
			names = append(names, k)
		}
		out.Headers[k] = v
	}
	return &out, names
}

// Record redacts rec's Body and HTTP envelope in place and returns what it
// redacted, tagged with rec.Seq.
func (r *Redactor) Record(rec *Record) []Redaction {
	var found []Redaction
	if rec.Kind == wire.KindStderr {
		if out, n := r.Text(rec.Body); n > 0 {
			rec.Body = out
			found = append(found, Redaction{Path: "(stderr)", Rule: "pattern"})
		}
	} else if len(rec.Body) > 0 {
		rec.Body, found = r.Message(rec.Method, rec.Body)
	}
	env, names := r.Envelope(rec.HTTP)
	rec.HTTP = env
	for _, h := range names {
		found = append(found, Redaction{Path: "http.headers." + h, Rule: "http credential header"})
	}
	for i := range found {
		found[i].Seq = rec.Seq
	}
	return found
}
