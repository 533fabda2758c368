package capture

// Redaction for bug-report exports (invariant 4: secrets stay home). The
// rules here follow where ACP puts secrets on the wire: authenticate
// params, env and headers of mcpServers, credential-looking _meta keys,
// the JetBrains gateway token in initialize _meta. Secrets turn up
// elsewhere too (a tool call's rawInput, a file an agent writes, a URL),
// so redact_json.go and redact_text.go look for them everywhere. Only the
// secret values change; every other byte of a message stays as it was.

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

// Redactor applies the rules. It is safe for concurrent use. One
// Redactor serves one export: it numbers the credential fingerprints it
// meets (exportState.label) and follows key blocks across stderr lines.
type Redactor struct {
	paths    []string
	patterns []*regexp.Regexp
	state    *exportState
	cache    *textCache
}

// credentialKey matches _meta keys that look like credentials.
var credentialKey = regexp.MustCompile(`(?i)token|secret|key|passw|auth|cookie|credential|bearer`)

// credentialHeaders are HTTP headers whose values are never exported;
// headers whose names name a credential (X-Auth-Token) join them.
var credentialHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "cookie": true, "set-cookie": true,
	"x-api-key": true, "api-key": true, "sec-websocket-protocol": true,
}

// NewRedactor compiles the default rules plus opts.
func NewRedactor(opts RedactOptions) (*Redactor, error) {
	r := &Redactor{paths: opts.Paths, state: newExportState(), cache: &textCache{}}
	for _, p := range opts.Patterns {
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
// request it answers. Bodies that are not JSON are read as text.
func (r *Redactor) Message(method string, body []byte) ([]byte, []Redaction) {
	if out, found, ok := r.message(method, body); ok {
		return out, found
	}
	spans := r.textSpans(body, false)
	if len(spans) == 0 {
		return body, nil
	}
	return applySpans(body, spans), []Redaction{{Path: "(text)", Rule: spanKinds(spans)}}
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
	if underMeta(path[:n-1]) && credentialKey.MatchString(path[n-1]) {
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

// Text redacts secrets from free text (a stderr line, a command-line
// argument) and returns the result and the number of secrets.
func (r *Redactor) Text(b []byte) ([]byte, int) {
	spans := r.textSpans(b, false)
	return applySpans(b, spans), len(spans)
}

// lineKey names a stream of text lines: stderr, or one direction's
// non-JSON lines, of one connection.
type lineKey struct {
	conn   uint32
	dir    wire.Dir
	stderr bool
}

// Record redacts rec's Body and HTTP envelope in place and returns what it
// redacted, tagged with rec.Seq.
func (r *Redactor) Record(rec *Record) []Redaction {
	var found []Redaction
	switch {
	case rec.Kind == wire.KindStderr:
		found = r.line(lineKey{rec.Conn, rec.Dir, true}, rec, "(stderr)")
	case len(rec.Body) > 0:
		out, list, ok := r.message(rec.Method, rec.Body)
		if !ok {
			list = r.line(lineKey{rec.Conn, rec.Dir, false}, rec, "(text)")
		} else {
			// The walk checked the bytes as JSON; unchanged, they need
			// no second check when written (AppendJSONL).
			rec.validJSON = len(list) == 0 && len(out) == len(rec.Body)
			rec.Body = out
		}
		found = list
	}
	if rule := r.textField(&rec.Session); rule != "" { // JSONL writes it beside the body
		found = append(found, Redaction{Path: "session", Rule: rule})
	}
	env, headers := r.Envelope(rec.HTTP)
	rec.HTTP = env
	found = append(found, headers...)
	for i := range found {
		found[i].Seq = rec.Seq
	}
	return found
}

// line redacts one line of text. A private key printed to stderr spans
// many lines: from a BEGIN line without its END, every line up to the
// END line is key material.
func (r *Redactor) line(k lineKey, rec *Record, where string) []Redaction {
	b := rec.Body
	inKey := r.state.inKeyBlock(k)
	var spans []span
	rest := 0
	if inKey {
		rest = len(b)
		if e := bytes.Index(b, pemEnd); e >= 0 {
			rest, inKey = e, false
		}
		if rest > 0 {
			spans = append(spans, span{start: 0, end: rest, kind: "private key"})
		}
	}
	if !inKey {
		for _, sp := range r.textSpans(b[rest:], false) {
			sp.start, sp.end = sp.start+rest, sp.end+rest
			spans = append(spans, sp)
		}
		inKey = keyBlockOpen(b[rest:])
	}
	r.state.setInKeyBlock(k, inKey)
	if len(spans) == 0 {
		return nil
	}
	rec.Body = applySpans(b, spans)
	return []Redaction{{Path: where, Rule: spanKinds(spans)}}
}
