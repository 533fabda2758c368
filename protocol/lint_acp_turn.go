package protocol

import (
	"sort"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// Prompt turns: stop reasons, cancellation and permission answers.

func (l *linter) cancel(u unit, session string) {
	if pr := l.acp.prompts[session]; pr != nil && pr.cancelSeq == 0 {
		pr.cancelSeq = u.Seq
	}
	for _, perm := range l.acp.perms {
		if perm.session == session && perm.cancelSeq == 0 {
			perm.cancelSeq = u.Seq
		}
	}
}

func (l *linter) promptEnd(req, u unit, res map[string]any) {
	session := str(object(req.params()), "sessionId")
	pr := l.acp.prompts[session]
	if pr != nil && pr.seq == req.Seq {
		delete(l.acp.prompts, session)
	} else {
		pr = nil
	}
	if u.Kind == wire.KindError {
		if pr != nil && pr.cancelSeq != 0 {
			l.report("acp/cancel-stop-reason", []uint64{pr.cancelSeq, u.Seq}, "the prompt cancelled at seq %d ended with an error, not stopReason cancelled", pr.cancelSeq)
		}
		return
	}
	if l.acp.version >= 2 {
		// v2: the response only accepts the prompt; the turn runs on
		// until a state_update says idle (stateUpdate).
		if pr != nil {
			pr.accepted = u.Seq
			l.acp.prompts[session] = pr
		}
		return
	}
	reason, _ := res["stopReason"].(string)
	if !IsStopReasonIn(reason, l.acp.version) {
		l.report("acp/stop-reason", []uint64{u.Seq}, "stopReason %q is not one of %s", reason, strings.Join(StopReasons, ", "))
	}
	if pr != nil && pr.cancelSeq != 0 && reason != "cancelled" {
		l.report("acp/cancel-stop-reason", []uint64{pr.cancelSeq, u.Seq}, "the prompt cancelled at seq %d ended with stopReason %q", pr.cancelSeq, reason)
	}
}

func (l *linter) permissionAnswer(req, u unit, res map[string]any) {
	k := req.key(req.Dir, req.ID)
	perm := l.acp.perms[k]
	delete(l.acp.perms, k)
	if perm == nil {
		return
	}
	outcome := str(obj(res, "outcome"), "outcome")
	if u.Kind == wire.KindResponse {
		l.permissionShape(perm, u, res)
	}
	if perm.cancelSeq == 0 {
		return
	}
	if u.Kind == wire.KindError || outcome != "cancelled" {
		if u.Kind == wire.KindError {
			outcome = "an error"
		}
		l.report("acp/cancel-permission", []uint64{perm.seq, perm.cancelSeq, u.Seq}, "the permission request pending when the session was cancelled (seq %d) was answered with %s, not outcome cancelled", perm.cancelSeq, outcome)
	}
}

// permissionShape checks the client's answer to a permission request:
// {"outcome":{"outcome":"selected","optionId":<offered>}} or
// {"outcome":{"outcome":"cancelled"}}.
func (l *linter) permissionShape(perm *permRun, u unit, res map[string]any) {
	seqs := []uint64{perm.seq, u.Seq}
	o, ok := res["outcome"].(map[string]any)
	if !ok {
		l.report("acp/permission-outcome", seqs, "the permission answer %s has no outcome object", short(string(u.result())))
		return
	}
	switch kind := str(o, "outcome"); kind {
	case "cancelled":
	case "selected":
		if id := str(o, "optionId"); !perm.options[id] {
			l.report("acp/permission-outcome", seqs, "the permission answer selects option %q, which the request did not offer", id)
		}
	default:
		l.report("acp/permission-outcome", seqs, "the permission outcome is %q, want selected or cancelled", kind)
	}
}

// stateUpdate follows a v2 turn to its end: state "idle" ends the prompt
// turn of its session, with the stopReason a v1 prompt response carried.
func (l *linter) stateUpdate(u unit, upd map[string]any) {
	state := str(upd, "state")
	l.enumValue(u, "state_update state", state, SessionStates)
	reason, hasReason := upd["stopReason"].(string)
	if hasReason && !IsStopReasonIn(reason, max(l.acp.version, 2)) {
		l.report("acp/stop-reason", []uint64{u.Seq}, "state_update stopReason %q is not one of %s", reason, strings.Join(StopReasons, ", "))
	}
	if state != "idle" || l.acp.version < 2 {
		return
	}
	pr := l.acp.prompts[u.Session]
	if pr == nil {
		return
	}
	delete(l.acp.prompts, u.Session)
	if pr.cancelSeq != 0 && hasReason && reason != "cancelled" {
		l.report("acp/cancel-stop-reason", []uint64{pr.cancelSeq, u.Seq}, "the prompt cancelled at seq %d ended (state idle) with stopReason %q", pr.cancelSeq, reason)
	}
}

// turnsEnd reports the v2 prompt turns of a finished capture that were
// accepted but never ended with state idle.
func (l *linter) turnsEnd(a *acpState) {
	if !l.opts.Finished || a.version < 2 {
		return
	}
	var open []*promptRun
	for _, pr := range a.prompts {
		if pr.accepted != 0 {
			open = append(open, pr)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].seq < open[j].seq })
	for _, pr := range open {
		l.report("acp/v2-turn-end", []uint64{pr.seq, pr.accepted}, "the v2 prompt at seq %d was accepted (seq %d) but no state_update idle ended its turn", pr.seq, pr.accepted)
	}
}
