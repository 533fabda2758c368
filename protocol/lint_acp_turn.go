package protocol

import (
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
		return // v2: the response only acknowledges; the turn ends with state_update
	}
	reason, _ := res["stopReason"].(string)
	if !IsStopReason(reason) {
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
