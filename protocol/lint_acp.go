package protocol

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// acpState follows the ACP lifecycle: initialization, the negotiated
// version and capabilities, sessions, prompts and cancellation.
type acpState struct {
	sawClient   bool
	initSeq     uint64 // the initialize request
	initialized bool   // its response arrived
	early       []uint64
	// mcp is set when initialize carried an MCP date version: the traffic
	// is MCP (or the pre-alpha Agent Communication Protocol), not ACP.
	mcp        bool
	requested  int64
	version    int // negotiated; 0 until known
	clientCaps map[string]any
	agentCaps  map[string]any

	sessions   map[string]bool // established session ids
	loading    map[string]bool // sessions whose session/load or resume is unanswered
	newPending int             // session/new and session/fork awaiting answers
	prompts    map[string]*promptRun
	perms      map[pendingKey]*permRun
}

type promptRun struct {
	seq       uint64
	cancelSeq uint64
	accepted  uint64 // v2: the response that accepted the prompt
}

type permRun struct {
	seq       uint64
	session   string
	cancelSeq uint64
	options   map[string]bool // the optionIds offered
}

func optionIDs(p map[string]any) map[string]bool {
	ids := map[string]bool{}
	for _, o := range arr(p, "options") {
		om, _ := o.(map[string]any)
		ids[str(om, "optionId")] = true
	}
	return ids
}

func (s *acpState) init() {
	s.sessions = map[string]bool{}
	s.loading = map[string]bool{}
	s.prompts = map[string]*promptRun{}
	s.perms = map[pendingKey]*permRun{}
}

// acpMessage checks a request or notification.
func (l *linter) acpMessage(u unit) {
	a := l.acp
	// On a proxy-chain hop the client is whoever sends the inner message
	// from the client's side (Msg.From).
	from := u.From()
	if from == wire.DirClient && !a.sawClient {
		a.sawClient = true
		if !IsInitialize(u.Method) {
			l.report("acp/initialize-first", []uint64{u.Seq}, "the client's first message%s is %s, not initialize", hopNote(u.Hop), u.Method)
		}
	}
	if IsInitialize(u.Method) && u.Kind == wire.KindRequest && from == wire.DirClient {
		l.initializeRequest(u)
		return
	}
	if a.mcp {
		return
	}
	if u.Kind == wire.KindRequest && from == wire.DirClient && a.initSeq != 0 && !a.initialized {
		a.early = append(a.early, u.Seq)
	}
	l.methodChecks(u)
	// sessionId comes from classification; params are decoded whole only
	// for the prompt, whose content blocks are checked.
	sid := u.Session
	switch u.Method {
	case "session/update":
		l.sessionMessage(u, sid)
		l.updateChecks(u)
	case "session/prompt":
		l.sessionMessage(u, sid)
		l.promptContent(u, object(u.params()))
		if u.Kind == wire.KindRequest {
			a.prompts[sid] = &promptRun{seq: u.Seq}
		}
	case "session/cancel":
		l.sessionMessage(u, sid)
		l.cancel(u, sid)
	case "session/request_permission":
		l.sessionMessage(u, sid)
		p := object(u.params())
		l.permissionKinds(u, p)
		a.perms[u.key(u.Dir, u.ID)] = &permRun{seq: u.Seq, session: sid, options: optionIDs(p)}
	case "session/load", "session/resume":
		// load replays history as updates before it answers, so the
		// session exists at once; the client must still wait.
		if sid != "" && u.Kind == wire.KindRequest {
			a.sessions[sid], a.loading[sid] = true, true
		}
	case "session/new", "session/fork":
		if u.Kind == wire.KindRequest {
			a.newPending++
		}
		if u.Method == "session/fork" {
			l.sessionMessage(u, sid)
		}
	case "$/cancel_request":
		l.cancelRequest(u)
	default:
		if m, ok := Lookup(u.Method); ok && m.SessionScoped {
			l.sessionMessage(u, sid)
		}
		if strings.HasPrefix(u.Method, "fs/") || strings.HasPrefix(u.Method, "terminal/") {
			l.clientCapability(u)
		}
	}
}

func (l *linter) initializeRequest(u unit) {
	a := l.acp
	a.initSeq = u.Seq
	p := object(u.params())
	switch v := p["protocolVersion"].(type) {
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			l.report("acp/protocol-version", []uint64{u.Seq}, "initialize protocolVersion %s is not an integer", v)
		}
		a.requested = n
	case string:
		// MCP versions are dates: this is MCP traffic (e.g. the pre-alpha
		// Agent Communication Protocol), which ACP rules do not judge.
		a.mcp = true
	default:
		l.report("acp/protocol-version", []uint64{u.Seq}, "initialize has no integer protocolVersion")
	}
	// Capabilities left out are not supported.
	if a.clientCaps = obj(p, "clientCapabilities"); a.clientCaps == nil {
		a.clientCaps = map[string]any{}
	}
}

// methodChecks judges the method name against the catalog.
func (l *linter) methodChecks(u unit) {
	seq := []uint64{u.Seq}
	m, known, inVersion := LookupVersion(u.Method, l.acp.version)
	switch {
	case !known:
		l.report("acp/unknown-method", seq, "%s is not an ACP method; extensions start with \"_\"", u.Method)
		return
	case m.Stability == Extension || m.Stability == PreAlpha || IsSuccessor(u.Method):
		return // a wrapper left wrapped: lint_chain.go says why
	}
	if from := u.From(); !m.Sender.Allows(from) {
		l.report("acp/wrong-direction", seq, "%s is sent %s, but %s sent it%s", u.Method, m.Sender, sender(from), hopNote(u.Hop))
	}
	if m.Notification && u.Kind == wire.KindRequest {
		l.report("acp/call-shape", seq, "%s is a notification but was sent with an id", u.Method)
	} else if !m.Notification && u.Kind == wire.KindNotification {
		l.report("acp/call-shape", seq, "%s is a request but was sent without an id", u.Method)
	}
	if l.acp.version != 0 && !inVersion {
		l.report("acp/version-method", seq, "%s is not part of protocol v%d", u.Method, l.acp.version)
	}
	if m.Stability == Legacy {
		l.report("acp/legacy-method", seq, "%s is legacy (removed from the schema; model choice is a config option now)", u.Method)
	}
}

// sessionMessage checks that a message names an established session.
func (l *linter) sessionMessage(u unit, id string) {
	if id == "" {
		return
	}
	if l.acp.sessions[id] {
		if l.acp.loading[id] && u.From() == wire.DirClient && u.Method != "session/cancel" {
			l.report("acp/session-not-ready", []uint64{u.Seq}, "%s for session %s sent before its session/load or resume was answered", u.Method, id)
		}
		return
	}
	seq := []uint64{u.Seq}
	switch {
	case l.acp.newPending > 0 && u.From() == wire.DirAgent:
		l.report("acp/update-before-session", seq, "%s for session %s arrived before the session/new answer that names it", u.Method, id)
	case l.acp.newPending > 0:
		l.report("acp/session-not-ready", seq, "%s for session %s sent before session/new was answered", u.Method, id)
	default:
		l.report("acp/unknown-session", seq, "%s names session %s, which no session/new, load, resume or fork established", u.Method, id)
	}
}

func (l *linter) updateChecks(u unit) {
	raw := wire.Value(u.params(), "update")
	kindRaw := []byte(nil)
	if len(raw) > 0 && raw[0] == '{' {
		kindRaw = wire.Value(raw, "sessionUpdate")
	}
	kind, ok := "", len(kindRaw) > 0 && kindRaw[0] == '"'
	if ok {
		kind = wire.StringMember(raw, "sessionUpdate")
	}
	switch {
	case !ok:
		l.report("acp/update-discriminator", []uint64{u.Seq}, "session/update has no update.sessionUpdate (update.kind is not the discriminator)")
		return
	case strings.HasPrefix(kind, "_"):
		return
	}
	stability, known := LookupUpdate(kind)
	switch {
	case !known:
		l.report("acp/unknown-update", []uint64{u.Seq}, "unknown session/update variant %q", kind)
		return
	case stability == V2Draft && l.acp.version == 1:
		l.report("acp/version-update", []uint64{u.Seq}, "session/update variant %s belongs to the v2 draft, but v1 was negotiated", kind)
	}
	switch kind {
	case "state_update":
		l.stateUpdate(u, object(raw))
	case "tool_call", "tool_call_update":
		// Read in place: tool call updates are many and can be large.
		l.enumValue(u, "tool call status", wire.StringMember(raw, "status"), ToolStatuses)
		l.enumValue(u, "tool kind", wire.StringMember(raw, "kind"), ToolKinds)
	case "plan":
		if entries := wire.Value(raw, "entries"); len(entries) > 0 && entries[0] == '[' {
			wire.Elements(entries, func(e []byte) bool {
				if isObject(e) {
					l.enumValue(u, "plan entry priority", wire.StringMember(e, "priority"), PlanPriorities)
					l.enumValue(u, "plan entry status", wire.StringMember(e, "status"), PlanStatuses)
				}
				return true
			})
		}
	}
}

// permissionKinds checks the kinds of a permission request's options.
func (l *linter) permissionKinds(u unit, p map[string]any) {
	for _, o := range arr(p, "options") {
		om, _ := o.(map[string]any)
		l.enumValue(u, "permission option kind", str(om, "kind"), PermissionKinds)
	}
}

// enumValue checks one value of an enum-like field: v1's enums are closed;
// in v2 values starting with "_" are extensions and other unknown values
// are reserved for ACP (RFD "v2 Enum Variant Extension"). "" is absent.
func (l *linter) enumValue(u unit, field, value string, allowed []string) {
	if value == "" || contains(allowed, value) {
		return
	}
	if l.acp.version >= 2 {
		if strings.HasPrefix(value, "_") {
			return
		}
		l.report("acp/enum-value", []uint64{u.Seq}, "%s %q is neither one of %s nor a custom value starting with _ (other values are reserved for ACP)", field, value, strings.Join(allowed, ", "))
		return
	}
	l.report("acp/enum-value", []uint64{u.Seq}, "%s %q is not one of %s (v1 enums are closed; v2 allows custom values starting with _)", field, value, strings.Join(allowed, ", "))
}

// promptContent checks prompt blocks against the agent's promptCapabilities.
func (l *linter) promptContent(u unit, p map[string]any) {
	if l.acp.agentCaps == nil {
		return
	}
	caps := obj(l.acp.agentCaps, "promptCapabilities")
	need := map[string]string{"image": "image", "audio": "audio", "resource": "embeddedContext"}
	for _, b := range arr(p, "prompt") {
		bm, _ := b.(map[string]any)
		typ := str(bm, "type")
		if c, ok := need[typ]; ok && !isTrue(caps, c) {
			l.report("acp/prompt-capability", []uint64{u.Seq}, "the prompt holds a %s block but the agent did not advertise promptCapabilities.%s", typ, c)
		}
	}
}

// clientCapability checks an fs/* or terminal/* call against what the
// client advertised in initialize.
func (l *linter) clientCapability(u unit) {
	if l.acp.clientCaps == nil || u.From() != wire.DirAgent {
		return
	}
	caps := l.acp.clientCaps
	var ok bool
	var name string
	switch u.Method {
	case "fs/read_text_file":
		ok, name = isTrue(obj(caps, "fs"), "readTextFile"), "fs.readTextFile"
	case "fs/write_text_file":
		ok, name = isTrue(obj(caps, "fs"), "writeTextFile"), "fs.writeTextFile"
	default:
		if !strings.HasPrefix(u.Method, "terminal/") {
			return
		}
		ok, name = isTrue(caps, "terminal"), "terminal"
	}
	if !ok {
		l.report("acp/client-capability", []uint64{u.Seq}, "the agent called %s but the client did not advertise clientCapabilities.%s", u.Method, name)
	}
}

func (l *linter) cancelRequest(u unit) {
	raw := wire.Value(u.params(), "requestId")
	if raw == nil {
		l.report("acp/cancel-request-target", []uint64{u.Seq}, "$/cancel_request has no requestId")
		return
	}
	k := u.key(u.Dir, raw)
	if _, inFlight := l.rpc.pending.InFlight(u.Dir, raw); inFlight {
		return
	}
	what := "never sent"
	if prev, done := l.rpc.answered[k]; done {
		what = "already answered at seq " + uitoa(prev)
	}
	l.report("acp/cancel-request-target", []uint64{u.Seq}, "$/cancel_request targets request %s from %s, %s", k.id, sender(u.Dir), what)
}

// acpResponse checks a response against the request it answers.
func (l *linter) acpResponse(req, u unit) {
	a := l.acp
	// Only a few results are read; fs and terminal results can be large.
	var res map[string]any
	switch req.Method {
	case "initialize", "_proxy/initialize", "proxy/initialize", "session/new", "session/fork", "session/prompt", "session/request_permission":
		res = object(u.result())
	}
	switch req.Method {
	case "initialize", "_proxy/initialize", "proxy/initialize":
		a.initialized = true
		if a.mcp {
			return
		}
		l.initializeResponse(req, u, res)
		l.chainInitAnswer(req, u, res)
	case "session/new", "session/fork":
		if a.newPending > 0 {
			a.newPending--
		}
		if id := str(res, "sessionId"); id != "" {
			a.sessions[id] = true
		}
	case "session/load", "session/resume":
		delete(a.loading, req.Session)
		if u.Kind == wire.KindError {
			delete(a.sessions, req.Session)
		}
	case "session/prompt":
		l.promptEnd(req, u, res)
	case "session/request_permission":
		l.permissionAnswer(req, u, res)
	}
}

func (l *linter) initializeResponse(req, u unit, res map[string]any) {
	a := l.acp
	if u.Kind == wire.KindError {
		return
	}
	v, ok := res["protocolVersion"].(json.Number)
	n, err := v.Int64()
	if !ok || err != nil {
		l.report("acp/protocol-version", []uint64{u.Seq}, "the initialize result has no integer protocolVersion")
		return
	}
	a.version = int(n)
	a.agentCaps = obj(res, "agentCapabilities")
	if a.agentCaps == nil {
		a.agentCaps = map[string]any{}
	}
	if a.requested != 0 && n > a.requested {
		l.report("acp/version-negotiation", []uint64{req.Seq, u.Seq}, "the client asked for v%d and the agent answered v%d; the agent answers the requested version when it supports it, and the client should disconnect from a newer one", a.requested, n)
	}
}

func (l *linter) acpEnd() {
	hops := make([]int, 0, len(l.hops))
	for h := range l.hops {
		hops = append(hops, int(h))
	}
	sort.Ints(hops)
	for _, h := range hops {
		a := l.at(uint8(h))
		if len(a.early) > 0 {
			l.report("acp/not-initialized", a.early, "%d request(s) sent before initialize was answered%s", len(a.early), hopNote(uint8(h)))
		}
		l.turnsEnd(a)
	}
}

// hopNote names a proxy-chain hop in a finding's message; "" at hop 0.
func hopNote(hop uint8) string {
	if hop == 0 {
		return ""
	}
	return " (proxy-chain hop " + uitoa(uint64(hop)) + ")"
}

func uitoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
