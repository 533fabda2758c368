package capture

// Span editing: redaction (and replay's identifier rebinding) rewrite
// single values inside a message's exact bytes. Re-marshalling would
// reorder keys, change number spellings and escapes, and make a bug report
// lie about what was on the wire, so we find each value's span and splice.

import (
	"sort"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// WalkJSON calls visit for every value of the valid JSON document doc,
// depth first and in document order, with its path and its span
// doc[start:end]; see wire.Walk.
func WalkJSON(doc []byte, visit func(path []string, start, end int) bool) error {
	return wire.Walk(doc, visit)
}

// Edit replaces doc[Start:End] with With.
type Edit struct {
	Start, End int
	With       []byte
}

// ApplyEdits returns doc with the edits spliced in. Edits must not
// overlap; their order does not matter. doc is not modified.
func ApplyEdits(doc []byte, edits []Edit) []byte {
	if len(edits) == 0 {
		return doc
	}
	sort.Slice(edits, func(a, b int) bool { return edits[a].Start < edits[b].Start })
	out := make([]byte, 0, len(doc)+len(edits)*len(redactedLiteral))
	last := 0
	for _, e := range edits {
		out = append(out, doc[last:e.Start]...)
		out = append(out, e.With...)
		last = e.End
	}
	return append(out, doc[last:]...)
}

// PathString joins a WalkJSON path with dots, the form --redact, --ignore
// and diff output use.
func PathString(path []string) string { return strings.Join(path, ".") }

// MatchPath reports whether path matches the glob pattern: dot-separated
// segments where "*" matches one segment, "**" any number (also none), and
// a segment may hold * wildcards inside ("*Token"). "a[0]" is read as
// "a.0".
func MatchPath(pattern string, path []string) bool {
	return matchSegments(splitPattern(pattern), path)
}

func splitPattern(p string) []string {
	p = strings.NewReplacer("[", ".", "]", "").Replace(p)
	return strings.Split(strings.Trim(p, "."), ".")
}

func matchSegments(pat, path []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for k := 0; k <= len(path); k++ {
				if matchSegments(pat[1:], path[k:]) {
					return true
				}
			}
			return false
		}
		if len(path) == 0 || !matchSegment(pat[0], path[0]) {
			return false
		}
		pat, path = pat[1:], path[1:]
	}
	return len(path) == 0
}

// matchSegment matches one segment with * wildcards.
func matchSegment(pat, s string) bool {
	if !strings.Contains(pat, "*") {
		return pat == s
	}
	parts := strings.Split(pat, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, part := range parts[1 : len(parts)-1] {
		k := strings.Index(s, part)
		if k < 0 {
			return false
		}
		s = s[k+len(part):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}
