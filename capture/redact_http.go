package capture

// HTTP envelopes and credential fingerprints. The proxy never stores an
// HTTP credential; it stores a keyed fingerprint, "<redacted:hmac:…>", so
// that a capture tells one token from another (captures made before
// that hold "<redacted:sha256:…>", an unkeyed hash anyone can test
// guesses against). No export carries either: each fingerprint becomes
// "<redacted:token#N>", numbered in the order the export meets them, so
// "same token, different token" survives without any hash.

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/acpscope/acpscope/wire"
)

// exportState is what a Redactor remembers across the records of one
// export.
type exportState struct {
	mu     sync.Mutex
	labels map[string]int   // fingerprint → its number in this export
	inKey  map[lineKey]bool // text streams inside a private key block
}

func newExportState() *exportState {
	return &exportState{labels: map[string]int{}, inKey: map[lineKey]bool{}}
}

// label returns the neutral label of fingerprint fp.
func (s *exportState) label(fp []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.labels[string(fp)]
	if !ok {
		n = len(s.labels) + 1
		s.labels[string(fp)] = n
	}
	return fmt.Appendf(nil, "<redacted:token#%d>", n)
}

func (s *exportState) inKeyBlock(k lineKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inKey[k]
}

func (s *exportState) setInKeyBlock(k lineKey, in bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in {
		s.inKey[k] = true
	} else {
		delete(s.inKey, k)
	}
}

// fingerprintPrefixes open the fingerprints the proxy writes, keyed
// (hmac) and, in older captures, unkeyed (sha256).
var fingerprintPrefixes = [][]byte{[]byte("<redacted:hmac:"), []byte("<redacted:sha256:")}

// fingerprintSpans finds fingerprints and gives each its label.
func (r *Redactor) fingerprintSpans(b []byte, add func(span)) {
	for _, p := range fingerprintPrefixes {
		for i := 0; ; {
			k := bytes.Index(b[i:], p)
			if k < 0 {
				break
			}
			s := i + k
			e := s + len(p)
			for e < len(b) && isHex(b[e]) {
				e++
			}
			if e == s+len(p) || e >= len(b) || b[e] != '>' {
				i = s + len(p)
				continue
			}
			add(span{start: s, end: e + 1, kind: "credential fingerprint", with: r.state.label(b[s : e+1])})
			i = e + 1
		}
	}
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func credentialHeader(name string) bool {
	return credentialHeaders[strings.ToLower(name)] || credentialKey.MatchString(name) || credentialName(name)
}

// Envelope returns a copy of env with its secrets redacted, and what was
// redacted. A credential header keeps its shape only when the proxy
// fingerprinted it ("Bearer <redacted:token#1>", "sid=<redacted:token#2>;
// Path=/"); any other value of it is redacted whole. Other headers and
// the path are read as text.
func (r *Redactor) Envelope(env *wire.Envelope) (*wire.Envelope, []Redaction) {
	if env == nil {
		return nil, nil
	}
	out := *env
	var found []Redaction
	for _, f := range []struct {
		where string
		v     *string
	}{{"http.path", &out.Path}, {"http.connectionId", &out.ConnectionID}, {"http.sessionId", &out.SessionID}, {"http.eventId", &out.EventID}} {
		if rule := r.textField(f.v); rule != "" {
			found = append(found, Redaction{Path: f.where, Rule: rule})
		}
	}
	if len(env.Headers) == 0 {
		return &out, found
	}
	out.Headers = make(map[string]string, len(env.Headers))
	for _, k := range sortedKeys(env.Headers) {
		v, rule := r.header(k, env.Headers[k])
		out.Headers[k] = v
		if rule != "" {
			found = append(found, Redaction{Path: "http.headers." + k, Rule: rule})
		}
	}
	return &out, found
}

// textField redacts the secrets in *v and names what it found.
func (r *Redactor) textField(v *string) string {
	spans := r.textSpans([]byte(*v), false)
	if len(spans) > 0 {
		*v = string(applySpans([]byte(*v), spans))
	}
	return spanKinds(spans)
}

// header redacts one header value and names what it found.
func (r *Redactor) header(name, v string) (string, string) {
	spans := r.textSpans([]byte(v), false)
	nv := string(applySpans([]byte(v), spans))
	rule := spanKinds(spans)
	if !credentialHeader(name) || nv == Redacted {
		return nv, rule
	}
	if !labelled(spans) || !plainRest(nv) {
		return Redacted, "http credential header"
	}
	return nv, rule
}

func labelled(spans []span) bool {
	for _, s := range spans {
		if s.with != nil {
			return true
		}
	}
	return false
}

// plainRest reports whether a relabelled credential header holds nothing
// but labels and the words around them (schemes, cookie names and
// attributes): no run of 16 or more token characters mixing letters and
// digits, the form of key material.
func plainRest(v string) bool {
	for _, w := range strings.FieldsFunc(v, func(c rune) bool {
		return !(c < 128 && (isAlnum(byte(c)) || strings.ContainsRune("+/=_~.-", c)))
	}) {
		if len(w) >= 16 && strings.ContainsAny(w, "0123456789") && strings.IndexFunc(w, func(c rune) bool { return c < 128 && (isUpper(byte(c)) || isLower(byte(c))) }) >= 0 {
			return false
		}
	}
	return true
}

// Relabel replaces the credential fingerprints of rec's envelope by
// labels and changes nothing else: an export made with --no-redact keeps
// every secret that was on the wire, but the fingerprints are not
// secrets, they are hashes, and no export carries them.
func (r *Redactor) Relabel(rec *Record) {
	if rec.HTTP == nil || len(rec.HTTP.Headers) == 0 {
		return
	}
	out := *rec.HTTP
	out.Headers = make(map[string]string, len(rec.HTTP.Headers))
	for _, k := range sortedKeys(rec.HTTP.Headers) {
		b := []byte(rec.HTTP.Headers[k])
		var spans []span
		r.fingerprintSpans(b, func(s span) { spans = append(spans, s) })
		out.Headers[k] = string(applySpans(b, mergeSpans(spans)))
	}
	rec.HTTP = &out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
