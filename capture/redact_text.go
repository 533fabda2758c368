package capture

// Secrets in free text: a stderr line, a non-JSON frame, the inside of a
// JSON string. The scanners work on the exact bytes, so inside a JSON
// string they see escapes as written (a PEM block's line breaks are the
// two bytes \n) and every byte outside a secret stays as it was.

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"sort"
	"strings"
)

// span is one secret found in a text: b[start:end] becomes with, or
// Redacted when with is nil.
type span struct {
	start, end int
	kind       string
	with       []byte
}

// shape is a secret recognised by its form alone.
type shape struct {
	kind string
	re   *regexp.Regexp
	// hints: the rule runs only on texts holding one of them (cheap
	// bytes.Contains before a regular expression).
	hints [][]byte
	// bounded: the match must not continue a word (sk- in "task-list").
	bounded bool
	// accept, when set, confirms a match (Basic credentials decode to
	// user:password).
	accept func(secret []byte) bool
}

// shapes are the token formats of the services agents are given keys
// for. Each is an obviously structured prefix plus a body, so a match in
// prose is almost always a real key.
var shapes = []shape{
	{kind: "anthropic key", re: regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`), hints: hints("sk-ant-"), bounded: true},
	{kind: "openai key", re: regexp.MustCompile(`sk-[A-Za-z0-9_\-]{8,}`), hints: hints("sk-"), bounded: true},
	{kind: "google api key", re: regexp.MustCompile(`AIza[0-9A-Za-z_\-]{30,}`), hints: hints("AIza"), bounded: true},
	{kind: "github token", re: regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{16,}`), hints: hints("gh"), bounded: true},
	{kind: "github token", re: regexp.MustCompile(`github_pat_[A-Za-z0-9_]{22,}`), hints: hints("github_pat_"), bounded: true},
	{kind: "gitlab token", re: regexp.MustCompile(`gl(?:pat|dt|ptt|rt|soat|cbt|imt|ft)-[A-Za-z0-9_\-]{20,}`), hints: hints("gl"), bounded: true},
	{kind: "slack token", re: regexp.MustCompile(`xox[abprse]-[A-Za-z0-9\-]{10,}`), hints: hints("xox"), bounded: true},
	{kind: "slack token", re: regexp.MustCompile(`xapp-[0-9]-[A-Za-z0-9\-]{10,}`), hints: hints("xapp-"), bounded: true},
	{kind: "stripe key", re: regexp.MustCompile(`[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`), hints: hints("k_live_", "k_test_"), bounded: true},
	{kind: "stripe key", re: regexp.MustCompile(`whsec_[A-Za-z0-9+/=]{24,}`), hints: hints("whsec_"), bounded: true},
	{kind: "aws access key id", re: regexp.MustCompile(`(?:AKIA|ASIA)[0-9A-Z]{16}`), hints: hints("AKIA", "ASIA"), bounded: true},
	{kind: "jwt", re: regexp.MustCompile(`eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*`), hints: hints("eyJ"), bounded: true},
	{kind: "npm token", re: regexp.MustCompile(`npm_[A-Za-z0-9]{36}`), hints: hints("npm_"), bounded: true},
	{kind: "hugging face token", re: regexp.MustCompile(`hf_[A-Za-z0-9]{30,}`), hints: hints("hf_"), bounded: true},
	{kind: "pypi token", re: regexp.MustCompile(`pypi-AgE[A-Za-z0-9_\-]{50,}`), hints: hints("pypi-"), bounded: true},
	{kind: "bearer token", re: regexp.MustCompile(`(?i)bearer\s+(?P<secret>[A-Za-z0-9._~+/=\-]{8,})`), hints: hints("earer", "EARER"), bounded: true},
	{kind: "basic credentials", re: regexp.MustCompile(`(?i)basic\s+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})`), hints: hints("asic", "ASIC"), bounded: true, accept: userPassword},
}

// userPassword confirms Basic credentials: base64 of "user:password".
func userPassword(b []byte) bool {
	dec, err := base64.StdEncoding.DecodeString(string(b))
	return err == nil && bytes.IndexByte(dec, ':') > 0
}

// textSpans finds the secrets in b, merged and in order. json says b is
// the inside of a JSON string literal (escapes as written).
func (r *Redactor) textSpans(b []byte, json bool) []span {
	if r.cache.isClean(b, json) {
		return nil
	}
	var found []span
	add := func(s span) {
		if s.end > s.start {
			found = append(found, s)
		}
	}
	if len(b) >= splitScanLen {
		found = r.splitScans(b, json)
	} else {
		r.shapeScans(b, add)
		r.wordScans(b, json, add)
	}
	awsSecretSpans(b, found, add)
	r.fingerprintSpans(b, add)
	if len(found) == 0 {
		r.cache.addClean(b, json)
	}
	return mergeSpans(found)
}

// shapeScans and wordScans are the scanners that need nothing but b,
// in two halves of about the same cost.
func (r *Redactor) shapeScans(b []byte, add func(span)) {
	held := heldHints(b)
	for i := range shapes {
		if held == nil && !containsAny(b, shapes[i].hints) || held != nil && !held[i] {
			continue
		}
		shapeSpans(&shapes[i], b, add)
	}
	for _, re := range r.patterns {
		patternSpans(re, b, add)
	}
}

func (r *Redactor) wordScans(b []byte, json bool, add func(span)) {
	settingSpans(b, json, add)
	flagSpans(b, add)
	commandSpans(b, json, add)
	urlPasswordSpans(b, add)
	keyBlockSpans(b, add)
	puttySpans(b, add)
}

// splitScanLen is the text length from which the two halves of the
// scanners run at once: a large file's content is one string, and the
// scans over it were most of the time a large message took to export.
const splitScanLen = 8 << 20

// splitScans runs shapeScans on a goroutine of its own (which ends
// before splitScans returns) and wordScans on the caller's.
func (r *Redactor) splitScans(b []byte, json bool) []span {
	var shaped, worded []span
	collect := func(to *[]span) func(span) {
		return func(s span) {
			if s.end > s.start {
				*to = append(*to, s)
			}
		}
	}
	done := make(chan struct{})
	go func() { // the shape scanner
		defer close(done)
		r.shapeScans(b, collect(&shaped))
	}()
	r.wordScans(b, json, collect(&worded))
	<-done
	return append(shaped, worded...)
}

// shapeSpans adds the matches of s in b, which holds one of its hints.
func shapeSpans(s *shape, b []byte, add func(span)) {
	group := s.re.SubexpIndex("secret")
	for _, m := range s.re.FindAllSubmatchIndex(b, -1) {
		if s.bounded && !wordStart(b, m[0]) {
			continue
		}
		start, end := m[0], m[1]
		if group > 0 {
			start, end = m[2*group], m[2*group+1]
		}
		if s.accept != nil && !s.accept(b[start:end]) {
			continue
		}
		add(span{start: start, end: end, kind: s.kind})
	}
}

// patternSpans applies a --redact-re pattern; a group named "secret"
// limits the replacement to it.
func patternSpans(re *regexp.Regexp, b []byte, add func(span)) {
	group := re.SubexpIndex("secret")
	for _, m := range re.FindAllSubmatchIndex(b, -1) {
		start, end := m[0], m[1]
		if group > 0 && m[2*group] >= 0 {
			start, end = m[2*group], m[2*group+1]
		}
		if end > start {
			add(span{start: start, end: end, kind: "pattern"})
		}
	}
}

// hintScanLen is the text length from which heldHints looks for every
// shape's hints in one pass rather than one pass per hint: in a 200 MB
// file read, twenty-one passes took most of its redaction's second.
const hintScanLen = 64 << 10

// hintTable finds which of several groups of hints a text holds, in
// one pass: it lists the hints by their first two bytes (every hint has
// two at least).
type hintTable struct {
	any  [1 << 16]bool
	refs map[uint16][]hintRef
	n    int // groups
}

type hintRef struct {
	group int
	hint  []byte
}

func newHintTable(groups ...[][]byte) *hintTable {
	t := &hintTable{refs: map[uint16][]hintRef{}, n: len(groups)}
	for i, g := range groups {
		for _, h := range g {
			k := uint16(h[0])<<8 | uint16(h[1])
			t.any[k] = true
			t.refs[k] = append(t.refs[k], hintRef{group: i, hint: h})
		}
	}
	return t
}

// held reports, per group, whether b holds one of its hints.
func (t *hintTable) held(b []byte) []bool {
	held := make([]bool, t.n)
	for j := 0; j+1 < len(b); j++ {
		k := uint16(b[j])<<8 | uint16(b[j+1])
		if !t.any[k] {
			continue
		}
		for _, r := range t.refs[k] {
			if !held[r.group] && bytes.HasPrefix(b[j:], r.hint) {
				held[r.group] = true
			}
		}
	}
	return held
}

// shapeHints holds every shape's hints, a group per shape.
var shapeHints = func() *hintTable {
	groups := make([][][]byte, len(shapes))
	for i := range shapes {
		groups[i] = shapes[i].hints
	}
	return newHintTable(groups...)
}()

// heldHints reports, for a long b, which shapes have a hint in b (nil
// for a short one: the shapes then look for their hints themselves).
func heldHints(b []byte) []bool {
	if len(b) < hintScanLen {
		return nil
	}
	return shapeHints.held(b)
}

// holdsAny reports whether b holds one of hints, which t holds as its
// one group: in one pass when b is long.
func holdsAny(b []byte, hints [][]byte, t *hintTable) bool {
	if len(b) < hintScanLen {
		return containsAny(b, hints)
	}
	return t.held(b)[0]
}

func containsAny(b []byte, hints [][]byte) bool {
	for _, h := range hints {
		if bytes.Contains(b, h) {
			return true
		}
	}
	return false
}

// hints makes a shape's hints.
func hints(h ...string) [][]byte {
	out := make([][]byte, len(h))
	for i, s := range h {
		out[i] = []byte(s)
	}
	return out
}

// wordStart reports whether a match at b[i] begins a word: the byte before
// it is no letter or digit, or is the letter of an escape (\n, \t) inside
// a JSON string.
func wordStart(b []byte, i int) bool {
	if i == 0 {
		return true
	}
	c := b[i-1]
	if !isAlnum(c) && c != '_' {
		return true
	}
	return escapeLetter(b, i-1)
}

// escapeLetter reports whether b[i] is the letter of a backslash escape:
// it follows an odd number of backslashes.
func escapeLetter(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// mergeSpans sorts spans and joins the overlapping ones. A span inside
// another adds nothing; one that extends it adds its kind.
func mergeSpans(s []span) []span {
	if len(s) < 2 {
		return s
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].start < s[j].start })
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.start >= last.end {
			out = append(out, x)
			continue
		}
		if x.end > last.end {
			last.end = x.end
			last.with = nil // a label covers its fingerprint only
			if !strings.Contains(last.kind, x.kind) {
				last.kind += ", " + x.kind
			}
		}
	}
	return out
}

// applySpans returns b with the spans replaced.
func applySpans(b []byte, spans []span) []byte {
	if len(spans) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	last := 0
	for _, s := range spans {
		out = append(out, b[last:s.start]...)
		if s.with != nil {
			out = append(out, s.with...)
		} else {
			out = append(out, Redacted...)
		}
		last = s.end
	}
	return append(out, b[last:]...)
}

// spanKinds lists the kinds of spans once each, in order.
func spanKinds(spans []span) string {
	var kinds []string
	for _, s := range spans {
		for _, k := range strings.Split(s.kind, ", ") {
			if !containsString(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	return strings.Join(kinds, ", ")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
