package fault

import (
	"encoding/json"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// Plan is a parsed fault plan: rules tried in order for every message,
// the first active rule that matches acting on it.
type Plan struct {
	// Name is where the plan came from (a file or a built-in name).
	Name string
	// Source is the plan's text, kept so a capture can carry it.
	Source []byte
	// Seed drives every random choice; HasSeed is false when the plan
	// gave none and one was chosen (it is recorded so a run can be redone).
	Seed    int64
	HasSeed bool
	Rules   []*Rule
}

// Rule is one rule of a plan: which messages (Match), when (After, Times,
// Probability) and what to do (the actions).
type Rule struct {
	Name string
	Line int // where it starts in the plan
	// Match is the filter, in the capture filter language; nil matches all.
	Match *capture.Filter
	// After lets the first After matches through untouched; Times acts on
	// at most Times matches (0: no limit); Probability acts on a match
	// with this chance (0: always), drawn from the seed.
	After       int
	Times       int
	Probability float64

	// The actions, applied in this order: the body is changed (Replace,
	// Rewrite, Pad, Truncate, Corrupt), then it is dropped, answered,
	// delayed, held for reordering or duplicated; then Inject, Close, Kill.
	Delay    Delay
	Drop     bool
	Dup      int // extra copies
	Reorder  int // window size
	Rewrite  []Rewrite
	Replace  []byte // nil: none
	Pad      *Pad
	Truncate int // keep this many bytes (0: none; use Replace for empty)
	Corrupt  int // bytes to overwrite
	Answer   *Answer
	Inject   []Inject
	Close    bool
	Kill     bool
}

// Delay is a fixed delay (Max zero) or one drawn uniformly in [Min, Max].
type Delay struct{ Min, Max time.Duration }

// zero reports no delay.
func (d Delay) zero() bool { return d.Min == 0 && d.Max == 0 }

// Rewrite sets the JSON value at a dotted path (array elements by index).
type Rewrite struct {
	Path  []string
	Value json.RawMessage
}

// Pad sets the string at Path to Size bytes of filler (an oversized message).
type Pad struct {
	Path []string
	Size int64
}

// Answer is a canned reply to a matched request, sent back to its sender
// instead of forwarding the request: Result, or Error when set.
type Answer struct {
	Result json.RawMessage
	Error  json.RawMessage
}

// Inject is a message sent after the matched one, in direction Dir (to
// the agent: wire.DirClient). {{id}}, {{sessionId}} and {{method}} in it
// are the matched message's.
type Inject struct {
	Dir wire.Dir
	Msg []byte
}

// acts reports whether the rule does anything beyond matching.
func (r *Rule) changesBody() bool {
	return r.Replace != nil || len(r.Rewrite) > 0 || r.Pad != nil || r.Truncate > 0 || r.Corrupt > 0
}
