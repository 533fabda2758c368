package protocol

import (
	"sort"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// batchState follows batch arrays (seed 000): batches a side sent that
// await the other side's reply, and empty batches that await their one
// Invalid Request error.
type batchState struct {
	open     map[wire.Dir][]*sentBatch
	empty    map[wire.Dir][]uint64
	v1Warned bool
}

type sentBatch struct {
	seq           uint64
	ids           map[string]bool
	separate      map[string]bool // ids answered outside a reply array
	requests      int
	notifications int
	invalid       int
}

func (s *batchState) init() {
	s.open = map[wire.Dir][]*sentBatch{}
	s.empty = map[wire.Dir][]uint64{}
}

// batchFrame checks a whole batch array before its members are checked
// one by one.
func (l *linter) batchFrame(u unit) {
	members := u.cls.Members
	if len(members) == 0 {
		l.emptyBatch(u)
		return
	}
	if !l.batch.v1Warned && l.hops[0].version == 1 {
		l.batch.v1Warned = true
		l.report("batch/v1", []uint64{u.Seq}, "%s sent a batch under protocol v1, whose stdio transport speaks of individual messages; v2 allows batches", sender(u.Dir))
	}
	calls, replies := 0, 0
	for _, m := range members {
		switch m.Kind {
		case wire.KindResponse, wire.KindError:
			replies++
		default:
			calls++
		}
	}
	if calls == 0 {
		l.replyBatch(u)
		return
	}
	b := &sentBatch{seq: u.Seq, ids: map[string]bool{}, separate: map[string]bool{}}
	for _, m := range members {
		switch m.Kind {
		case wire.KindRequest:
			b.requests++
			b.ids[idKey(m.ID)] = true
		case wire.KindNotification:
			b.notifications++
		case wire.KindResponse, wire.KindError:
		default:
			b.invalid++
			l.report("batch/invalid-entry", []uint64{u.Seq}, "batch entry %s is not a request, notification or response", short(string(u.Body[m.Start:m.End])))
		}
		if lifecycleMethods[m.Method] && (m.Kind == wire.KindRequest || m.Kind == wire.KindNotification) {
			l.report("batch/lifecycle", []uint64{u.Seq}, "%s travelled in a batch; lifecycle messages should be sent on their own", m.Method)
		}
	}
	l.batch.open[u.Dir] = append(l.batch.open[u.Dir], b)
}

func (l *linter) emptyBatch(u unit) {
	other := u.Dir.Reverse()
	if open := l.batch.open[other]; len(open) > 0 {
		l.batch.open[other] = open[1:]
		l.report("batch/empty-array-reply", []uint64{open[0].seq, u.Seq}, "%s answered the batch at seq %d with an empty array; with nothing to send it must send nothing", sender(u.Dir), open[0].seq)
		return
	}
	l.report("batch/empty", []uint64{u.Seq}, "%s sent an empty batch", sender(u.Dir))
	l.batch.empty[u.Dir] = append(l.batch.empty[u.Dir], u.Seq)
}

// replyBatch matches a batch of responses to the batch it answers (the
// first with a common id, else the oldest) and checks the reply.
func (l *linter) replyBatch(u unit) {
	other := u.Dir.Reverse()
	open := l.batch.open[other]
	if len(open) == 0 {
		return
	}
	at := 0
	for i, b := range open {
		if batchOverlaps(b, u.cls.Members) {
			at = i
			break
		}
	}
	b := open[at]
	l.batch.open[other] = append(open[:at:at], open[at+1:]...)
	seqs := []uint64{b.seq, u.Seq}
	if b.requests == 0 && b.invalid == 0 {
		l.report("batch/all-notifications-reply", seqs, "the batch at seq %d held only notifications, yet %s replied", b.seq, sender(u.Dir))
		return
	}
	invalidReplies := 0
	for _, m := range u.cls.Members {
		if id := idKey(m.ID); id != "" && id != "null" {
			continue
		}
		if m.Kind == wire.KindError && m.HasErrorCode && m.ErrorCode == -32600 {
			invalidReplies++
			continue
		}
		if m.Kind == wire.KindResponse {
			l.report("batch/notification-reply", seqs, "the reply to the batch at seq %d answers a notification (a result with no id)", b.seq)
		}
	}
	answered := map[string]bool{}
	for _, m := range u.cls.Members {
		answered[idKey(m.ID)] = true
	}
	var missing []string
	for id := range b.ids {
		if !answered[id] && !b.separate[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		l.report("batch/missing-response", seqs, "the reply to the batch at seq %d has no response for id %s", b.seq, strings.Join(missing, ", "))
	}
	if invalidReplies < b.invalid {
		l.report("batch/invalid-entry-reply", seqs, "the batch at seq %d had %d invalid entries but the reply holds %d Invalid Request errors with id null",
			b.seq, b.invalid, invalidReplies)
	}
}

// batchSeparateReply notes a response outside any array that answers a
// request of an open batch: batches SHOULD be answered with one array.
func (l *linter) batchSeparateReply(u unit) {
	if u.batch != 0 {
		return
	}
	id := idKey(u.ID)
	for _, b := range l.batch.open[u.Dir.Reverse()] {
		if !b.ids[id] || b.separate[id] {
			continue
		}
		if len(b.separate) == 0 {
			l.report("batch/reply-not-array", []uint64{b.seq, u.Seq}, "a request of the batch at seq %d was answered on its own; a batch is answered with one array", b.seq)
		}
		b.separate[id] = true
		if len(b.separate) == len(b.ids) && b.invalid == 0 {
			l.dropOpen(u.Dir.Reverse(), b)
		}
		return
	}
}

func (l *linter) dropOpen(dir wire.Dir, b *sentBatch) {
	open := l.batch.open[dir]
	for i, x := range open {
		if x == b {
			l.batch.open[dir] = append(open[:i:i], open[i+1:]...)
			return
		}
	}
}

func batchOverlaps(b *sentBatch, members []wire.Member) bool {
	for _, m := range members {
		if b.ids[idKey(m.ID)] {
			return true
		}
	}
	return false
}

// batchNullReply accounts for a null-id response that batch rules
// explain: the answer to an empty batch, or a member of a reply batch
// (checked as a whole by replyBatch). It reports whether it did.
func (l *linter) batchNullReply(u unit) bool {
	other := u.Dir.Reverse()
	if pending := l.batch.empty[other]; len(pending) > 0 && u.Kind == wire.KindError {
		l.batch.empty[other] = pending[1:]
		switch {
		case u.batch != 0:
			l.report("batch/empty-reply", []uint64{pending[0], u.Seq}, "the empty batch at seq %d was answered inside an array; it gets a single error object", pending[0])
		case !u.cls.HasErrorCode || u.cls.ErrorCode != -32600:
			l.report("batch/empty-reply", []uint64{pending[0], u.Seq}, "the empty batch at seq %d was answered with code %d, want -32600 Invalid Request", pending[0], u.cls.ErrorCode)
		}
		return true
	}
	if u.batch != 0 {
		if q := l.rpc.unreadable[other]; u.Kind == wire.KindError && len(q) > 0 {
			l.rpc.unreadable[other] = q[1:]
		}
		return true
	}
	return false
}

func (l *linter) batchEnd() {
	if !l.opts.Finished {
		return
	}
	for _, dir := range []wire.Dir{wire.DirClient, wire.DirAgent} {
		for _, seq := range l.batch.empty[dir] {
			l.report("batch/empty-reply", []uint64{seq}, "the empty batch at seq %d never got its -32600 Invalid Request error", seq)
		}
	}
}
