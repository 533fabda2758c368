package protocol

import (
	"bytes"

	"github.com/acpscope/acpscope/wire"
)

// unit is one JSON-RPC message as the analyses see it: a whole frame, or
// one member of a batch with the batch's bytes narrowed to the member.
type unit struct {
	Msg
	cls wire.Message
	// batch is the Seq of the enclosing batch frame, 0 for none.
	batch uint64
	// inner holds the params of the message a proxy-chain wrapper
	// carries (Hop > 0); Method and Session are already the inner ones.
	inner []byte
}

// resolve makes a proxy-chain wrapper read as the message it carries.
func (u *unit) resolve() {
	if !IsSuccessor(u.Method) {
		return
	}
	if in := Unwrap(&u.Msg); in.Hop > 0 {
		u.Method, u.Session, u.Hop, u.inner = in.Method, in.Session, uint8(min(in.Hop, 255)), in.Params
	}
}

// forEachUnit walks msgs in order, calling fn for every frame except
// stderr lines. A batch frame is passed first as itself (Kind KindBatch),
// then once per member; members take the Seq of their own record when the
// capture stored one, else the batch's. Member records whose batch is
// present are not passed a second time.
func forEachUnit(msgs []Msg, fn func(u unit)) {
	present := map[uint64]bool{}
	members := map[uint64][]uint64{}
	for i := range msgs {
		m := &msgs[i]
		if m.Kind == wire.KindBatch || (m.Kind == wire.KindUnknown && len(m.Body) > 0 && firstByte(m.Body) == '[') {
			present[m.Seq] = true
		}
	}
	for i := range msgs {
		if p := msgs[i].Parent; p != 0 && present[p] {
			members[p] = append(members[p], msgs[i].Seq)
		}
	}
	for i := range msgs {
		m := msgs[i]
		if m.Kind == wire.KindStderr || (m.Parent != 0 && present[m.Parent]) {
			continue
		}
		u := classifyMsg(m)
		fn(u)
		if u.Kind != wire.KindBatch {
			continue
		}
		seqs := members[m.Seq]
		for j, mem := range u.cls.Members {
			mu := unit{Msg: m, cls: mem.Message, batch: m.Seq}
			mu.Body = m.Body[mem.Start:mem.End]
			mu.Kind, mu.Flags = mem.Kind, mem.Flags|m.Flags&^wire.FlagBatchMember|wire.FlagBatchMember
			mu.ID, mu.Method, mu.Session, mu.Parent = mem.ID, mem.Method, mem.SessionID, m.Seq
			mu.Hop = 0
			mu.resolve()
			if j < len(seqs) {
				mu.Seq = seqs[j]
			}
			fn(mu)
		}
	}
}

// classifyMsg classifies a frame's bytes; a frame without bytes keeps the
// kind its record carries.
func classifyMsg(m Msg) unit {
	u := unit{Msg: m}
	if m.Body == nil {
		u.cls = wire.Message{Kind: m.Kind, Flags: m.Flags, ID: m.ID, Method: m.Method, SessionID: m.Session}
		return u
	}
	u.cls = wire.Classify(m.Body)
	// Flags that only the capture knows (partial, after-exit…) survive.
	u.Flags = m.Flags | u.cls.Flags
	if m.Kind != wire.KindStderr {
		u.Kind = u.cls.Kind
	}
	u.ID, u.Method = u.cls.ID, u.cls.Method
	if u.cls.SessionID != "" {
		u.Session = u.cls.SessionID
	}
	if u.Kind == wire.KindRequest || u.Kind == wire.KindNotification {
		u.Hop = 0 // the bytes say; a response keeps its request's
		u.resolve()
	}
	return u
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// params and result read a member of a unit's object without validating
// it again: Classify already did, for every protocol kind. A wrapper's
// params are those of the message it carries.
func (u *unit) params() []byte {
	if u.Hop > 0 && u.inner != nil {
		return u.inner
	}
	return u.member("params")
}

func (u *unit) result() []byte { return u.member("result") }

func (u *unit) member(key string) []byte {
	if !u.Kind.IsProtocol() || u.Kind == wire.KindBatch {
		return u.Msg.member(key)
	}
	b := bytes.TrimSpace(u.Body)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	return wire.Value(b, key)
}
