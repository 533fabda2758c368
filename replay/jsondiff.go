package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/acpscope/acpscope/capture"
)

// Change is one field-level difference between two messages.
type Change struct {
	Path string `json:"path"` // e.g. "result.stopReason"
	Op   string `json:"op"`   // "changed", "added" (only in the new), "removed"
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

func (c Change) String() string {
	switch c.Op {
	case "added":
		return fmt.Sprintf("%s: added %s", c.Path, c.New)
	case "removed":
		return fmt.Sprintf("%s: removed (was %s)", c.Path, c.Old)
	}
	return fmt.Sprintf("%s: %s → %s", c.Path, c.Old, c.New)
}

// DefaultIgnore are the volatile paths a comparison skips unless told
// otherwise: JSON-RPC ids, session ids (they differ on every run), _meta
// (trace context, timings) and timestamps.
var DefaultIgnore = []string{
	"id", "**.sessionId", "**._meta", "**._meta.**",
	"**.timestamp", "**.*Timestamp", "**.*At", "**.time",
}

// Ignore decides which paths a comparison skips.
type Ignore []string

// Match reports whether path is ignored.
func (ig Ignore) Match(path []string) bool {
	for _, p := range ig {
		if capture.MatchPath(p, path) {
			return true
		}
	}
	return false
}

// decode parses JSON keeping numbers exact.
func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// DiffJSON compares two JSON documents field by field. mapOld rewrites
// the old side's strings first (identifier rebinding); nil keeps them.
// Paths ignore matches are skipped. Invalid JSON compares as text.
func DiffJSON(old, new []byte, ignore Ignore, mapOld func(string) string) []Change {
	a, errA := decode(old)
	b, errB := decode(new)
	if errA != nil || errB != nil {
		if bytes.Equal(old, new) {
			return nil
		}
		return []Change{{Path: "(text)", Op: "changed", Old: short(string(old)), New: short(string(new))}}
	}
	var out []Change
	diffValue(nil, a, b, ignore, mapOld, &out)
	return out
}

func diffValue(path []string, a, b any, ignore Ignore, mapOld func(string) string, out *[]Change) {
	if len(path) > 0 && ignore.Match(path) {
		return
	}
	orig := a
	if s, ok := a.(string); ok && mapOld != nil {
		a = mapOld(s) // compare rebound, but show what was recorded
	}
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			diffObject(path, av, bv, ignore, mapOld, out)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			diffArray(path, av, bv, ignore, mapOld, out)
			return
		}
	}
	if !equalJSON(a, b) {
		*out = append(*out, Change{Path: capture.PathString(path), Op: "changed", Old: render(orig), New: render(b)})
	}
}

func diffObject(path []string, a, b map[string]any, ignore Ignore, mapOld func(string) string, out *[]Change) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := append(path[:len(path):len(path)], k)
		av, inA := a[k]
		bv, inB := b[k]
		switch {
		case ignore.Match(p):
		case !inB:
			*out = append(*out, Change{Path: capture.PathString(p), Op: "removed", Old: render(av)})
		case !inA:
			*out = append(*out, Change{Path: capture.PathString(p), Op: "added", New: render(bv)})
		default:
			diffValue(p, av, bv, ignore, mapOld, out)
		}
	}
}

func diffArray(path []string, a, b []any, ignore Ignore, mapOld func(string) string, out *[]Change) {
	n := max(len(a), len(b))
	for i := 0; i < n; i++ {
		p := append(path[:len(path):len(path)], strconv.Itoa(i))
		switch {
		case ignore.Match(p):
		case i >= len(b):
			*out = append(*out, Change{Path: capture.PathString(p), Op: "removed", Old: render(a[i])})
		case i >= len(a):
			*out = append(*out, Change{Path: capture.PathString(p), Op: "added", New: render(b[i])})
		default:
			diffValue(p, a[i], b[i], ignore, mapOld, out)
		}
	}
}

// equalJSON compares scalars; a container reaches here only when the
// other side is not the same kind of container.
func equalJSON(a, b any) bool {
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

// render shows a value compactly for a diff line.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return short(string(b))
}

// short cuts long values so a diff stays readable.
func short(s string) string {
	const limit = 120
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }
