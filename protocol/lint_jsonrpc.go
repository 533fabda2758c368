package protocol

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/acpscope/acpscope/wire"
)

// rpcState pairs requests and responses per direction (each side has its
// own id space) and counts unreadable frames that deserve a null-id reply.
type rpcState struct {
	pending  *wire.Pairer[unit]    // in flight (a linter sees one connection)
	answered map[pendingKey]uint64 // answered: the response's seq
	// unreadable queues the frames a side sent that the other may answer
	// with an error carrying a null id (parse errors, invalid requests).
	unreadable map[wire.Dir][]unreadable
}

// unreadable is a frame that deserves a null-id error with code.
type unreadable struct {
	seq  uint64
	code int64
}

func (s *rpcState) init() {
	s.pending = wire.NewPairer[unit]()
	s.answered = map[pendingKey]uint64{}
	s.unreadable = map[wire.Dir][]unreadable{}
}

func (l *linter) rpcUnit(u unit) {
	switch u.Kind {
	case wire.KindRequest, wire.KindNotification, wire.KindResponse, wire.KindError:
	case wire.KindNonProtocol:
		switch {
		case isJSONObject(u.Body):
			what := "a JSON object with no method, result or error"
			if wire.Value(bytes.TrimSpace(u.Body), "id") != nil {
				what = "a response with neither result nor error"
			}
			l.report("jsonrpc/invalid-message", []uint64{u.Seq}, "%s sent %s", sender(u.Dir), what)
			l.unreadable(u, -32600)
		case u.batch != 0:
			l.unreadable(u, -32600) // a batch entry that is not an object
		case len(bytes.TrimSpace(u.Body)) > 0:
			l.unreadable(u, -32700)
		}
		return
	case wire.KindInvalidJSON, wire.KindInvalidUTF8:
		l.unreadable(u, -32700)
		return
	default:
		return
	}
	l.rpcShape(u)
	switch u.Kind {
	case wire.KindRequest:
		l.rpcRequest(u)
	case wire.KindNotification:
		l.chainMessage(u)
		l.at(u.Hop)
		l.acpMessage(u)
	default:
		l.rpcResponse(u)
	}
}

// rpcShape checks the members every message must get right.
func (l *linter) rpcShape(u unit) {
	seq := []uint64{u.Seq}
	if u.Flags&wire.FlagBadVersion != 0 {
		got := "missing"
		if v := wire.Value(bytes.TrimSpace(u.Body), "jsonrpc"); v != nil {
			got = string(v)
		}
		l.report("jsonrpc/version", seq, `"jsonrpc" is %s, want "2.0"`, short(got))
	}
	if u.Kind == wire.KindRequest || u.Kind == wire.KindNotification {
		if m := wire.Value(bytes.TrimSpace(u.Body), "method"); len(m) > 0 && m[0] != '"' {
			l.report("jsonrpc/invalid-message", seq, `"method" is %s, not a string`, short(string(m)))
		}
	}
	if id := bytes.TrimSpace(u.ID); len(id) > 0 {
		switch id[0] {
		case '"':
		case 'n':
			if u.Kind == wire.KindRequest {
				l.report("jsonrpc/request-null-id", seq, "%s request has id null", u.Method)
			}
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if bytes.ContainsAny(id, ".eE") {
				l.report("jsonrpc/id-fractional", seq, "id %s is not an integer", id)
			}
		default:
			l.report("jsonrpc/id-type", seq, "id %s is not a string, a number or null", short(string(id)))
		}
	}
	if u.cls.Result != nil && u.cls.Error != nil {
		l.report("jsonrpc/result-and-error", seq, "response has both result and error")
	}
	if u.Kind == wire.KindError {
		if msg := errorShape(u.cls.Error); msg != "" {
			l.report("jsonrpc/error-object", seq, "%s", msg)
		}
	}
}

// errorShape says what is wrong with an error member, "" when nothing.
func errorShape(raw []byte) string {
	var e map[string]json.RawMessage
	if json.Unmarshal(raw, &e) != nil {
		return "error is " + short(string(raw)) + ", not an object"
	}
	code, ok := e["code"]
	if !ok {
		return "error has no code"
	}
	if c := bytes.TrimSpace(code); len(c) == 0 || bytes.ContainsAny(c, `."eE[{tfn`) {
		return "error.code is " + short(string(code)) + ", not an integer"
	}
	msg, ok := e["message"]
	if !ok {
		return "error has no message"
	}
	if m := bytes.TrimSpace(msg); len(m) == 0 || m[0] != '"' {
		return "error.message is " + short(string(msg)) + ", not a string"
	}
	return ""
}

// unreadable notes a frame the other side may answer with a null id.
func (l *linter) unreadable(u unit, code int64) {
	l.rpc.unreadable[u.Dir] = append(l.rpc.unreadable[u.Dir], unreadable{u.Seq, code})
}

func (l *linter) rpcRequest(u unit) {
	k := u.key(u.Dir, u.ID)
	if prev, dup := l.rpc.pending.Request(u.Dir, u.ID, u); dup {
		l.report("jsonrpc/duplicate-id", []uint64{prev.Seq, u.Seq}, "%s reused id %s while its %s request (seq %d) is still unanswered",
			sender(u.Dir), k.id, prev.Method, prev.Seq)
	}
	delete(l.rpc.answered, k)
	l.chainMessage(u)
	l.at(u.Hop)
	l.acpMessage(u)
}

func (l *linter) rpcResponse(u unit) {
	id := idKey(u.ID)
	if id == "" || id == "null" {
		if l.batchNullReply(u) {
			return
		}
		if q := l.rpc.unreadable[u.Dir.Reverse()]; len(q) > 0 {
			l.rpc.unreadable[u.Dir.Reverse()] = q[1:]
			if u.Kind == wire.KindError && u.cls.HasErrorCode && u.cls.ErrorCode != q[0].code {
				l.report("jsonrpc/unreadable-reply-code", []uint64{q[0].seq, u.Seq}, "the message at seq %d was answered with code %d, want %d (%s)",
					q[0].seq, u.cls.ErrorCode, q[0].code, ErrorCodes[q[0].code])
			}
			return
		}
		l.report("jsonrpc/reply-to-notification", []uint64{u.Seq},
			"%s answered with id null though %s sent nothing unreadable: notifications get no reply", sender(u.Dir), sender(u.Dir.Reverse()))
		return
	}
	k := u.key(u.Dir.Reverse(), u.ID)
	req, ok := l.rpc.pending.Response(u.Dir, u.ID)
	if !ok {
		if prev, done := l.rpc.answered[k]; done {
			l.report("jsonrpc/response-duplicate", []uint64{prev, u.Seq}, "request %s was already answered at seq %d", id, prev)
		} else {
			l.report("jsonrpc/response-unknown-id", []uint64{u.Seq}, "%s answered id %s, which %s never sent", sender(u.Dir), id, sender(u.Dir.Reverse()))
		}
		return
	}
	l.rpc.answered[k] = u.Seq
	l.batchSeparateReply(u)
	// The answer to a wrapped request is a plain response: it belongs to
	// the hop of the request.
	u.Hop = req.Hop
	l.at(req.Hop)
	l.acpResponse(req, u)
}

func (l *linter) rpcEnd() {
	if !l.opts.Finished {
		return
	}
	left := l.rpc.pending.Outstanding()
	sort.Slice(left, func(i, j int) bool { return left[i].Seq < left[j].Seq })
	for _, req := range left {
		l.report("jsonrpc/unanswered", []uint64{req.Seq}, "%s request (id %s) from %s was never answered",
			req.Method, idKey(req.ID), sender(req.Dir))
	}
}
