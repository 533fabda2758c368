package protocol

import (
	"strconv"
	"strings"
	"time"
)

// Fault says what acpscope did to a message instead of forwarding it as
// it arrived: a fault plan's rule did it, or a person (intercept, send).
// Traffic acpscope changes is never hidden: every dropped, changed,
// delayed, duplicated, held or made-up message is a record carrying one.
//
// One alteration may leave two records sharing an ID: the message as it
// arrived (StageReplaced, never delivered as such) and what was delivered
// in its place (StageForwarded).
type Fault struct {
	// ID numbers the alteration within the run; the records of one share it.
	ID uint64 `json:"id"`
	// Action is what was done: one of the Action* constants.
	Action string `json:"action"`
	// Stage says which side of the alteration this record is.
	Stage string `json:"stage"`
	// Rule names the plan's rule, "" when done by hand (By).
	Rule string `json:"rule,omitempty"`
	// By is who did it: "plan", "intercept" (held in the inspector),
	// "send" (injected by hand) or "serve" (a bound of acpscope serve's,
	// which no run opts into; ID 0).
	By string `json:"by"`
	// Arrived is when the message reached acpscope (unix ns); the record's
	// own time is when it was forwarded, or when it was given up.
	Arrived int64 `json:"arrived,omitempty"`
	// Note says more: how long it was delayed, why a hold ended.
	Note string `json:"note,omitempty"`
}

// The actions a Fault records.
const (
	ActionDelay     = "delay"
	ActionDrop      = "drop"
	ActionDuplicate = "duplicate"
	ActionReorder   = "reorder"
	ActionRewrite   = "rewrite"
	ActionReplace   = "replace"
	ActionTruncate  = "truncate"
	ActionCorrupt   = "corrupt"
	ActionAnswer    = "answer"
	ActionInject    = "inject"
	ActionClose     = "close"
	ActionKill      = "kill"
	ActionHold      = "hold"
	ActionEdit      = "edit"
	ActionSend      = "send"
)

// The stages of a Fault's record.
const (
	// StageDropped: arrived and was never delivered.
	StageDropped = "dropped"
	// StageReplaced: arrived, and something else was delivered in its
	// place (the StageForwarded record with the same ID).
	StageReplaced = "replaced"
	// StageForwarded: delivered, changed, late or out of order.
	StageForwarded = "forwarded"
	// StageInjected: delivered, but never sent by the other side (a
	// duplicate, a canned answer, an injected or hand-sent message).
	StageInjected = "injected"
)

// The doers of a Fault.
const (
	ByPlan      = "plan"
	ByIntercept = "intercept"
	BySend      = "send"
	// ByServe: serve dropped an agent message for a stream no client
	// had opened, past the bound of the connection's streams.
	ByServe = "serve"
	// ByProxy: proxy, under interception, dropped an agent event over
	// --max-message-size, which it cannot hold whole to pass on.
	ByProxy = "proxy"
)

// Delivered reports whether the record's bytes reached the other side.
func (f *Fault) Delivered() bool {
	return f == nil || f.Stage == StageForwarded || f.Stage == StageInjected
}

// Superseded reports a record that stands for bytes the receiver never
// saw, because a changed copy went instead: pairing and lint read the
// copy, not it.
func (f *Fault) Superseded() bool { return f != nil && f.Stage == StageReplaced }

// String describes the fault on one line for listings:
// "dropped by rule drop-cancel (#3)", "forwarded late: delay 500ms".
func (f *Fault) String() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(f.Stage)
	b.WriteString(" (" + f.Action)
	switch {
	case f.Rule != "":
		b.WriteString(" by rule " + f.Rule)
	case f.By != "":
		b.WriteString(" by " + f.By)
	}
	if f.ID != 0 { // alterations a run opted into are numbered
		b.WriteString(", #" + strconv.FormatUint(f.ID, 10))
	}
	b.WriteString(")")
	if f.Note != "" {
		b.WriteString(": " + f.Note)
	}
	return b.String()
}

// Held returns how long the message waited in acpscope before the record's
// time t (unix ns), 0 when unknown.
func (f *Fault) Held(t int64) time.Duration {
	if f == nil || f.Arrived == 0 || t < f.Arrived {
		return 0
	}
	return time.Duration(t - f.Arrived)
}
