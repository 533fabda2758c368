package replay

import (
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// candidate is a recorded message a live one may stand for.
type candidate struct {
	index   int // in the recording
	changes []Change
}

// paramsOf returns the exact bytes of a message's params (nil if none).
func paramsOf(body []byte) []byte {
	if len(body) == 0 || body[0] != '{' {
		return nil
	}
	return wire.Value(body, "params")
}

// diffParams compares a recorded message's params (rebound by mapOld) with
// a live one's, skipping volatile paths.
func diffParams(recorded, live []byte, mapOld func(string) string) []Change {
	a, b := paramsOf(recorded), paramsOf(live)
	if a == nil {
		a = []byte("null")
	}
	if b == nil {
		b = []byte("null")
	}
	return DiffJSON(a, b, paramsIgnore, mapOld)
}

// paramsIgnore: inside params, session ids and _meta vary between runs.
var paramsIgnore = Ignore{"sessionId", "**.sessionId", "_meta", "**._meta", "**._meta.**"}

// nearest ranks recorded messages of the live one's direction and kind
// at indexes where usable(i) holds: those with the same method by how few
// params differ (another session's costs more); failing any, the closest
// method. sameMethod tells which it found.
func nearest(rec []protocol.Msg, live *protocol.Msg, usable func(int) bool, mapOld func(string) string) (best candidate, sameMethod bool, found bool) {
	bestScore := -1
	for i := range rec {
		r := &rec[i]
		if r.Dir != live.Dir || r.Kind != live.Kind || r.Method != live.Method || !usable(i) {
			continue
		}
		ch := diffParams(r.Body, live.Body, mapOld)
		score := len(ch)
		if r.Session != "" && live.Session != "" && mapOld(r.Session) != live.Session {
			score += 100 // another session's request: only when nothing closer exists
		}
		if bestScore < 0 || score < bestScore {
			bestScore, best = score, candidate{index: i, changes: ch}
		}
	}
	if bestScore >= 0 {
		return best, true, true
	}
	// No such method: the closest other one, for the report.
	for i := range rec {
		r := &rec[i]
		if r.Dir != live.Dir || r.Kind != live.Kind || !usable(i) {
			continue
		}
		if score := methodDistance(r.Method, live.Method); bestScore < 0 || score < bestScore {
			bestScore, best = score, candidate{index: i}
		}
	}
	if bestScore < 0 {
		return candidate{}, false, false
	}
	best.changes = diffParams(rec[best.index].Body, live.Body, mapOld)
	return best, false, true
}

// methodDistance prefers methods in the same namespace ("fs/…").
func methodDistance(a, b string) int {
	pa, _, _ := strings.Cut(a, "/")
	pb, _, _ := strings.Cut(b, "/")
	if pa == pb {
		return 0
	}
	return 1
}

// lenientMethods are matched by method alone (differences only warned
// about): connection and session setup varies between clients and runs
// (client versions, capabilities, cwd) without changing the conversation.
// Prompts and extensions must match their params.
func lenient(method string) bool {
	switch method {
	case "session/prompt":
		return false
	}
	return !strings.HasPrefix(method, "_")
}
