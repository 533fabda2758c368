package replay

import (
	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// A capture made under a fault plan, a hold or acpscope send holds, besides
// what each side sent, what acpscope made of it: changed copies delivered
// in place of originals, duplicates, canned answers, injected messages
// (protocol.Fault). A replay must pick one view of it.

// CountAltered counts the messages of msgs that acpscope altered.
func CountAltered(msgs []protocol.Msg) int {
	n := 0
	for i := range msgs {
		if msgs[i].Fault != nil {
			n++
		}
	}
	return n
}

// AsSent returns the messages as their senders sent them: what acpscope
// injected or delivered as a changed copy is left out; what it dropped
// or held is kept, since its sender did send it. A replay that applies no
// faults plays and expects this.
func AsSent(msgs []protocol.Msg) []protocol.Msg {
	if CountAltered(msgs) == 0 {
		return msgs
	}
	copies := replacedIDs(msgs)
	out := make([]protocol.Msg, 0, len(msgs))
	for _, m := range msgs {
		if sentBySide(&m, copies) {
			out = append(out, m)
		}
	}
	return out
}

// AsFaulted returns what a replay that applies the recorded fault plan
// again plays and expects: the client's messages as the client sent them
// (the plan alters them again on their way to the new agent), and the
// agent's as the client received them (what the plan made of them).
func AsFaulted(msgs []protocol.Msg) []protocol.Msg {
	if CountAltered(msgs) == 0 {
		return msgs
	}
	copies := replacedIDs(msgs)
	out := make([]protocol.Msg, 0, len(msgs))
	for _, m := range msgs {
		keep := m.Fault.Delivered()
		if m.Dir == wire.DirClient {
			keep = sentBySide(&m, copies)
		}
		if keep {
			out = append(out, m)
		}
	}
	return out
}

// sentBySide reports whether m's sender sent it, rather than acpscope.
func sentBySide(m *protocol.Msg, copies map[uint64]bool) bool {
	f := m.Fault
	switch {
	case f == nil:
		return true
	case f.Stage == protocol.StageInjected:
		return false
	case f.Stage == protocol.StageForwarded && copies[f.ID]:
		return false // the changed copy; its original is the replaced record
	}
	return true
}

// replacedIDs returns the alterations that replaced an original.
func replacedIDs(msgs []protocol.Msg) map[uint64]bool {
	ids := map[uint64]bool{}
	for i := range msgs {
		if f := msgs[i].Fault; f.Superseded() {
			ids[f.ID] = true
		}
	}
	return ids
}
