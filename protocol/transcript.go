package protocol

import (
	"encoding/json"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// BuildTranscript rebuilds the conversation from msgs, in capture order.
// It never fails: what it does not understand it keeps verbatim.
func BuildTranscript(msgs []Msg) *Transcript {
	b := &builder{t: &Transcript{}, byID: map[sessionKey]*Session{}, pending: pairs[pendingReq]{}, versions: map[uint8]int{},
		mcp: mcpState{servers: map[mcpKey]*Session{}, conns: map[mcpKey]*Session{}}}
	forEachUnit(msgs, b.unit)
	return b.t
}

type pendingReq struct {
	u    unit
	item *Item // the permission, client-call or MCP item it made
	turn *Turn // the prompt turn it opened
	sess *Session
	// servers are the MCP-over-ACP servers a session/new declared, bound
	// to its session when the answer names it.
	servers []string
	// mcpSession is the session whose server an mcp/connect asks for;
	// mcpCall the tools/call an mcp/message carries.
	mcpSession *Session
	mcpCall    *MCPCall
}

type builder struct {
	t       *Transcript
	byID    map[sessionKey]*Session
	pending pairs[pendingReq]
	// versions holds the negotiated protocol version of each proxy-chain
	// hop: the two conversations a proxy holds may differ.
	versions map[uint8]int
	mcp      mcpState
}

// sessionKey names a session within its proxy-chain hop: a proxy and its
// successor usually share session ids, but what each side saw differs
// (the proxy may rewrite prompts and filter updates), so each hop keeps
// its own transcript of the session.
type sessionKey struct {
	hop uint8
	id  string
}

func (b *builder) unit(u unit) {
	switch u.Kind {
	case wire.KindRequest:
		b.request(u)
	case wire.KindNotification:
		b.notification(u)
	case wire.KindResponse, wire.KindError:
		if req, ok := b.pending.of(u.Conn).Response(u.Dir, u.ID); ok {
			b.response(req, u)
		}
	}
}

func (b *builder) session(hop uint8, id string) *Session {
	k := sessionKey{hop, id}
	if s, ok := b.byID[k]; ok {
		return s
	}
	s := &Session{ID: id, Hop: hop, Origin: "unknown", tools: map[string]*Item{}}
	b.byID[k] = s
	b.t.Sessions = append(b.t.Sessions, s)
	return s
}

// current returns the turn new items of s go to.
func (s *Session) current() *Turn {
	if s.loading != nil {
		return s.loading
	}
	if len(s.Turns) == 0 {
		s.Turns = append(s.Turns, &Turn{Index: 0})
	}
	return s.Turns[len(s.Turns)-1]
}

// nextIndex numbers turns from 1; the setup turn is 0.
func (s *Session) nextIndex() int {
	n := 1
	for _, t := range s.Turns {
		if t.Index >= n {
			n = t.Index + 1
		}
	}
	return n
}

func (s *Session) add(it *Item) *Item {
	t := s.current()
	it.Replayed = t.Replayed
	t.Items = append(t.Items, it)
	return it
}

func (b *builder) request(u unit) {
	p := object(u.params())
	req := pendingReq{u: u}
	switch u.Method {
	case "session/load", "session/resume":
		s := b.session(u.Hop, str(p, "sessionId"))
		s.Origin = strings.TrimPrefix(u.Method, "session/")
		s.Seqs = append(s.Seqs, u.Seq)
		if u.Method == "session/load" {
			s.loading = &Turn{Index: s.nextIndex(), Replayed: true}
			s.Turns = append(s.Turns, s.loading)
		}
		req.sess = s
		b.declareServers(u.Hop, s, acpServers(p))
	case "session/new", "session/fork":
		req.servers = acpServers(p)
	case "mcp/connect", "mcp/message", "_mcp/connect", "_mcp/message":
		b.mcpRequest(u, &req)
	case "session/prompt":
		s := b.session(u.Hop, str(p, "sessionId"))
		t := &Turn{Index: s.nextIndex(), PromptSeq: u.Seq, Prompt: blocks(arr(p, "prompt"))}
		s.Turns = append(s.Turns, t)
		req.turn = t
	case "session/request_permission":
		s := b.session(u.Hop, str(p, "sessionId"))
		req.item = s.add(&Item{Kind: ItemPermission, Seqs: []uint64{u.Seq}, Permission: permission(p)})
	default:
		if strings.HasPrefix(u.Method, "fs/") || strings.HasPrefix(u.Method, "terminal/") || strings.HasPrefix(u.Method, "elicitation/") {
			s := b.session(u.Hop, str(p, "sessionId"))
			req.item = s.add(&Item{Kind: ItemCall, Seqs: []uint64{u.Seq}, Call: &ClientCall{Method: u.Method, Summary: callSummary(u.Method, p)}})
		}
	}
	b.pending.of(u.Conn).Request(u.Dir, u.ID, req)
}

func (b *builder) response(req pendingReq, u unit) {
	// Only a few results are read whole; fs and terminal results can be large.
	var res map[string]any
	switch req.u.Method {
	case "initialize", "_proxy/initialize", "proxy/initialize", "session/new", "session/fork", "session/prompt", "session/request_permission", "terminal/create", "terminal/wait_for_exit":
		res = object(u.result())
	}
	errMsg := ""
	if u.Kind == wire.KindError {
		errMsg = str(object(wire.Value(u.Body, "error")), "message")
		if errMsg == "" {
			errMsg = "error"
		}
	}
	switch req.u.Method {
	case "initialize", "_proxy/initialize", "proxy/initialize":
		b.initialize(req.u, res)
	case "session/new", "session/fork":
		if id := str(res, "sessionId"); id != "" {
			s := b.session(req.u.Hop, id)
			s.Origin = strings.TrimPrefix(req.u.Method, "session/")
			s.Seqs = append(s.Seqs, req.u.Seq, u.Seq)
			if mode := str(obj(res, "modes"), "currentModeId"); mode != "" && s.Mode == "" {
				s.Mode = mode
			}
			b.declareServers(req.u.Hop, s, req.servers)
		}
	case "mcp/connect", "mcp/message", "_mcp/connect", "_mcp/message":
		b.mcpAnswer(req, u)
	case "session/load", "session/resume":
		if s := req.sess; s != nil {
			s.Seqs = append(s.Seqs, u.Seq)
			s.loading = nil
		}
	case "session/prompt":
		if t := req.turn; t != nil {
			if b.versions[req.u.Hop] >= 2 && errMsg == "" {
				// v2: the answer only accepts the prompt; a state_update
				// "idle" ends the turn.
				t.AcceptSeq = u.Seq
				break
			}
			t.EndSeq, t.StopReason, t.Error = u.Seq, str(res, "stopReason"), errMsg
		}
	}
	if it := req.item; it != nil && req.mcpCall == nil {
		it.Seqs = append(it.Seqs, u.Seq)
		switch {
		case it.Permission != nil && errMsg != "":
			it.Permission.Outcome, it.Permission.Error = "error", errMsg
		case it.Permission != nil:
			o := obj(res, "outcome")
			it.Permission.Outcome, it.Permission.OptionID = str(o, "outcome"), str(o, "optionId")
		case it.Call != nil && errMsg != "":
			it.Call.Error = errMsg
		case it.Call != nil:
			it.Call.Result = resultSummary(req.u.Method, res, u.result())
		}
	}
}

func (b *builder) initialize(req unit, res map[string]any) {
	if v, ok := res["protocolVersion"].(json.Number); ok {
		if n, err := v.Int64(); err == nil {
			b.versions[req.Hop] = int(n)
		}
	}
	if req.Hop != 0 {
		return // the transcript's header describes the capture's own peers
	}
	b.t.Version = b.versions[0]
	b.t.Agent = info(obj(res, "agentInfo"))
	b.t.Client = info(obj(object(req.params()), "clientInfo"))
}

func info(m map[string]any) string {
	name := str(m, "name")
	if v := str(m, "version"); v != "" {
		return name + " " + v
	}
	return name
}

func (b *builder) notification(u unit) {
	p := object(u.params())
	switch u.Method {
	case "session/update":
		b.update(u, b.session(u.Hop, str(p, "sessionId")), obj(p, "update"), wire.Value(u.params(), "update"))
	case "session/cancel":
		s := b.session(u.Hop, str(p, "sessionId"))
		if t := s.current(); t.PromptSeq != 0 && t.EndSeq == 0 {
			t.CancelSeq = u.Seq
		}
	}
}
