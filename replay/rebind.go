package replay

import (
	"encoding/json"
	"regexp"
	"sort"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// Binder rebinds identifiers a live peer mints differently from the
// recording (sessionId, terminalId, toolCallId, optionId, …). It learns
// old→new pairs by reading a recorded message and its live counterpart at
// the same JSON paths, and rewrites later outgoing messages: every string
// value equal to a learned old id becomes the new one, wherever it occurs.
// The zero value is not usable; call NewBinder.
type Binder struct {
	m map[string]string
}

// NewBinder returns an empty Binder.
func NewBinder() *Binder { return &Binder{m: map[string]string{}} }

// idKey matches the member names that hold minted identifiers. A bare
// "id" (a mode, an auth method) is a name chosen by the sender, not minted.
var idKey = regexp.MustCompile(`^(.+Id|.+ID|.+_id|.+Ids)$`)

// Binding is one learned pair.
type Binding struct {
	Path     string
	Old, New string
}

// Learn compares recorded and observed (two versions of the same message)
// and remembers each id-like string that differs at the same path. The
// JSON-RPC id itself is left to the drivers: each direction keeps its own.
func (b *Binder) Learn(recorded, observed []byte) []Binding {
	return b.LearnIf(recorded, observed, nil)
}

// LearnIf is Learn restricted to the paths keep accepts (nil keeps all).
func (b *Binder) LearnIf(recorded, observed []byte, keep func(path string) bool) []Binding {
	rec := idLeaves(recorded)
	if len(rec) == 0 {
		return nil
	}
	obs := idLeaves(observed)
	// In path order: two paths may hold the same old id with different
	// new ones, and the last learned wins, so map order would make the
	// bindings, and every diff after them, differ from run to run.
	paths := make([]string, 0, len(rec))
	for path := range rec {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	var learned []Binding
	for _, path := range paths {
		old := rec[path]
		nw, ok := obs[path]
		if !ok || nw == old || old == "" || (keep != nil && !keep(path)) {
			continue
		}
		if b.m[old] != nw {
			b.m[old] = nw
			learned = append(learned, Binding{Path: path, Old: old, New: nw})
		}
	}
	sort.Slice(learned, func(i, j int) bool { return learned[i].Path < learned[j].Path })
	return learned
}

// idLeaves maps the path of each id-like string value to the value.
func idLeaves(doc []byte) map[string]string {
	out := map[string]string{}
	_ = capture.WalkJSON(doc, func(path []string, start, end int) bool {
		n := len(path)
		if n == 0 || doc[start] != '"' {
			return true
		}
		if n == 1 && path[0] == "id" {
			return true
		}
		key := path[n-1]
		if isIndex(key) && n >= 2 {
			key = path[n-2] // "terminalIds": ["t1", …]
		}
		if idKey.MatchString(key) {
			out[capture.PathString(path)] = unquote(doc[start:end])
		}
		return true
	})
	return out
}

func isIndex(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// Set records a binding directly.
func (b *Binder) Set(old, new string) {
	if old != new {
		b.m[old] = new
	}
}

// Map returns the live value for a recorded identifier (s itself when
// unknown).
func (b *Binder) Map(s string) string {
	if v, ok := b.m[s]; ok {
		return v
	}
	return s
}

// Len returns the number of learned bindings.
func (b *Binder) Len() int { return len(b.m) }

// Reverse returns a Binder mapping the other way.
func (b *Binder) Reverse() *Binder {
	r := NewBinder()
	for k, v := range b.m {
		r.m[v] = k
	}
	return r
}

// Apply rewrites every string value of doc (except the top-level JSON-RPC
// id) that equals a learned old id, editing in place: the other bytes stay
// as they were.
func (b *Binder) Apply(doc []byte) []byte {
	if len(b.m) == 0 {
		return doc
	}
	var edits []capture.Edit
	err := capture.WalkJSON(doc, func(path []string, start, end int) bool {
		if doc[start] != '"' || (len(path) == 1 && path[0] == "id") {
			return true
		}
		if nw, ok := b.m[unquote(doc[start:end])]; ok {
			edits = append(edits, capture.Edit{Start: start, End: end, With: wire.Quote(nw)})
		}
		return true
	})
	if err != nil {
		return doc
	}
	return capture.ApplyEdits(doc, edits)
}

func unquote(lit []byte) string {
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return ""
	}
	return s
}

func quote(s string) string { return string(wire.Quote(s)) }

// SetID returns doc (a JSON-RPC object) with its top-level "id" value
// replaced by id, every other byte unchanged.
func SetID(doc, id []byte) []byte {
	var edits []capture.Edit
	_ = capture.WalkJSON(doc, func(path []string, start, end int) bool {
		if len(path) == 1 && path[0] == "id" {
			edits = append(edits, capture.Edit{Start: start, End: end, With: id})
		}
		return len(path) == 0
	})
	return capture.ApplyEdits(doc, edits)
}
