package fault

import (
	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/wire"
)

// RuleCheck is what one rule would do to a capture's traffic.
type RuleCheck struct {
	Rule    *Rule
	Matched int      // messages its filter matches
	Acted   int      // of those, the ones it would act on (after, times, probability)
	Seqs    []uint64 // the first of those, by capture seq
}

// maxCheckSeqs bounds the seqs listed per rule.
const maxCheckSeqs = 10

// Check runs plan's matching over the messages of src as they were
// delivered, in order, and says what each rule would act on. Random
// choices are drawn from the plan's seed as a run would draw them, when
// the same messages arrive in the same order.
func Check(plan *Plan, src capture.Source) ([]RuleCheck, error) {
	e := New(Options{Plan: plan})
	out := make([]RuleCheck, len(plan.Rules))
	for i, r := range plan.Rules {
		out[i].Rule = r
	}
	var scanErr error
	needBody := anyNeedsBody(plan)
	err := src.Scan(1, func(rec *capture.Record) bool {
		if rec.Kind == wire.KindStderr || rec.Parent != 0 || rec.Fault.Superseded() {
			return true
		}
		if needBody {
			body, err := src.Body(rec.Seq)
			if err != nil {
				scanErr = err
				return false
			}
			rec.Body = body
		}
		before := e.appliedCounts()
		e.pick(rec.Dir, rec)
		after := e.appliedCounts()
		for i := range out {
			if after[i] > before[i] {
				out[i].Acted++
				if len(out[i].Seqs) < maxCheckSeqs {
					out[i].Seqs = append(out[i].Seqs, rec.Seq)
				}
			}
		}
		rec.Body = nil
		return true
	})
	if err == nil {
		err = scanErr
	}
	matched, _ := e.Counts()
	for i := range out {
		out[i].Matched = matched[i]
	}
	return out, err
}

func anyNeedsBody(plan *Plan) bool {
	for _, r := range plan.Rules {
		if r.Match.NeedsBody() {
			return true
		}
	}
	return false
}

func (e *Engine) appliedCounts() []int {
	_, applied := e.Counts()
	return applied
}
