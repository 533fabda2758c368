package protocol

import (
	"bytes"
	"fmt"
	"strings"
)

// Lint of a capture in which acpscope altered traffic (fault plans,
// holds, hand-sent messages) judges what each side received, and says
// where acpscope's own doing is behind a finding: a fault plan that drops
// an answer must not read as an agent that never answers.
//
// What each side received is every delivered record, plus a request that
// acpscope answered on the receiver's behalf: its sender sent it and got
// that answer, so the pair stands. A dropped message, and an original
// replaced by a changed copy, never arrived and are left out; a finding
// on a request whose answer was dropped says so.

// alterations is what lint knows of the messages acpscope altered.
type alterations struct {
	faults  map[uint64]*Fault // by seq, for every altered record
	dropped []Msg             // records that never reached their receiver
	first   []uint64          // the altered seqs, in capture order
}

// Received returns the messages as their receivers saw them: what lint
// judges and diff compares. msgs is returned as it is when acpscope
// altered nothing.
func Received(msgs []Msg) []Msg {
	out, _ := received(msgs)
	return out
}

// received is Received, and what acpscope altered (nil when nothing).
func received(msgs []Msg) ([]Msg, *alterations) {
	var alt *alterations
	for i := range msgs {
		if msgs[i].Fault != nil {
			alt = &alterations{faults: map[uint64]*Fault{}}
			break
		}
	}
	if alt == nil {
		return msgs, nil
	}
	out := make([]Msg, 0, len(msgs))
	for _, m := range msgs {
		f := m.Fault
		if f == nil {
			out = append(out, m)
			continue
		}
		alt.faults[m.Seq] = f
		alt.first = append(alt.first, m.Seq)
		if f.Delivered() || f.Action == ActionAnswer {
			out = append(out, m)
		} else {
			alt.dropped = append(alt.dropped, m)
		}
	}
	return out, alt
}

// explain adds to each finding that rests on an altered message what
// acpscope did, and one finding that says the capture was altered at all.
func (a *alterations) explain(out []Finding, byseq map[uint64]*Msg) []Finding {
	for i := range out {
		f := &out[i]
		var notes []string
		for _, s := range f.Seqs {
			if flt := a.faults[s]; flt != nil {
				notes = append(notes, fmt.Sprintf("#%d was %s", s, flt))
			}
		}
		if f.Rule == "jsonrpc/unanswered" && len(f.Seqs) > 0 {
			if req := byseq[f.Seqs[0]]; req != nil {
				if ans := a.droppedAnswer(req); ans != nil {
					f.Seqs = append(f.Seqs, ans.Seq)
					notes = append(notes, fmt.Sprintf("its answer #%d was %s", ans.Seq, ans.Fault))
				}
			}
		}
		if len(notes) > 0 {
			f.Message += " (acpscope altered this: " + strings.Join(notes, "; ") + ")"
		}
	}
	r := ruleIndex["acpscope/altered"]
	return append(out, Finding{Rule: r.ID, Severity: r.Severity, Ref: r.Ref, Seqs: a.first,
		Message: fmt.Sprintf("acpscope altered %s of this capture (fault plan, hold, send, or a message serve dropped with its streams full): findings judge what each side received; `dump --filter 'fault:*'` lists them", messages(len(a.first)))})
}

// droppedAnswer returns a dropped response to req, if one was dropped.
func (a *alterations) droppedAnswer(req *Msg) *Msg {
	for i := range a.dropped {
		m := &a.dropped[i]
		if m.Conn == req.Conn && m.Dir == req.Dir.Reverse() && m.Kind.IsResponse() && bytes.Equal(bytes.TrimSpace(m.ID), bytes.TrimSpace(req.ID)) {
			return m
		}
	}
	return nil
}

func messages(n int) string {
	if n == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", n)
}
