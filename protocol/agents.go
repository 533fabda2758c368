package protocol

import (
	"fmt"

	"github.com/acpscope/acpscope/wire"
)

// The pre-alpha Agent Communication Protocol (seed 002) runs on MCP: a
// client lists agents with agents/list, runs one with agents/run, and may
// pass an MCP progress token (params._meta.progressToken) to receive
// notifications/agents/run/progress, each carrying a delta of the output.
const (
	MethodAgentsList  = "agents/list"
	MethodAgentsRun   = "agents/run"
	MethodRunProgress = "notifications/agents/run/progress"
)

// RunOutput is one agents/run rebuilt from its progress deltas.
type RunOutput struct {
	Agent string // params.name
	// Token is the exact JSON of the progress token ("" when none).
	Token       string
	RequestSeq  uint64
	ResponseSeq uint64   // 0 while unanswered
	DeltaSeqs   []uint64 // the progress notifications, in order
	// Rebuilt is the output the deltas join to; MergeErr says why they
	// could not be joined.
	Rebuilt  any
	MergeErr error
	// Final is result.output of the response; HasFinal is false when the
	// run was not answered or failed.
	Final    any
	HasFinal bool
}

// Mismatch reports whether the deltas were joined, the final output is
// known, and the two differ; or the deltas could not be joined at all.
func (r RunOutput) Mismatch() bool {
	if len(r.DeltaSeqs) == 0 {
		return false
	}
	if r.MergeErr != nil {
		return true
	}
	return r.HasFinal && !EqualJSON(r.Rebuilt, r.Final)
}

// RunOutputs finds every agents/run request in msgs and rebuilds its
// output from the progress notifications that carry its token.
func RunOutputs(msgs []Msg) []*RunOutput {
	var (
		runs    []*RunOutput
		byToken = map[string]*RunOutput{}
		byID    = pairs[*RunOutput]{}
		deltas  = map[*RunOutput][]any{}
	)
	forEachUnit(msgs, func(u unit) {
		switch {
		case u.Kind == wire.KindRequest && u.Method == MethodAgentsRun && u.Dir == wire.DirClient:
			run := newRun(u)
			runs = append(runs, run)
			byID.of(u.Conn).Request(u.Dir, u.ID, run)
			if run.Token != "" {
				byToken[run.Token] = run
			}
		case u.Kind == wire.KindNotification && u.Method == MethodRunProgress:
			p := object(u.params())
			run := byToken[tokenKey(p["progressToken"])]
			if run == nil {
				return
			}
			run.DeltaSeqs = append(run.DeltaSeqs, u.Seq)
			deltas[run] = append(deltas[run], p["delta"])
		case (u.Kind == wire.KindResponse || u.Kind == wire.KindError) && u.Dir == wire.DirAgent:
			run, _ := byID.of(u.Conn).Response(u.Dir, u.ID)
			if run == nil || run.ResponseSeq != 0 {
				return
			}
			run.ResponseSeq = u.Seq
			if res := object(u.result()); res != nil {
				run.Final, run.HasFinal = res["output"], true
			}
		}
	})
	for _, run := range runs {
		run.Rebuilt, run.MergeErr = MergeAll(deltas[run])
	}
	return runs
}

func newRun(u unit) *RunOutput {
	p := object(u.params())
	run := &RunOutput{Agent: str(p, "name"), RequestSeq: u.Seq}
	// MCP puts the token under params._meta; accept a bare
	// params.progressToken too, as some early servers did.
	tok := obj(p, "_meta")["progressToken"]
	if tok == nil {
		tok = p["progressToken"]
	}
	run.Token = tokenKey(tok)
	return run
}

// tokenKey renders a progress token (string or number) as a map key.
func tokenKey(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("%q", t)
	case nil:
		return ""
	}
	return numberText(v)
}
