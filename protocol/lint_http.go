package protocol

import (
	"mime"
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// httpState follows the Streamable HTTP draft (seed 003) as the HTTP proxy
// records it: a POST body is a client record with the request's headers;
// its status comes on the next agent record of a POST exchange (the
// initialize reply, an SSE opening or a bodiless control record); GET,
// DELETE and WebSocket upgrades leave one control record each.
type httpState struct {
	posts []postRec       // POST bodies awaiting their status record
	known map[string]bool // connection ids the server issued
}

func (s *httpState) init() { s.known = map[string]bool{} }

// postRec is a POST body and whether it is session-scoped, decided when
// it is seen (a response's scope comes from the request it answers).
type postRec struct {
	u      unit
	scoped bool
}

func (l *linter) httpUnit(u unit) {
	env := u.HTTP
	l.httpVersion(u)
	switch {
	case refusedAtDoor(env) && env.Method != "POST":
		// Refused before routing (a token, Host or Origin check): the
		// RFD's routing statuses do not apply. A POST's refusal still
		// takes its POST off the waiting list, in postStatus.
	case env.Method == "POST" && u.Dir == wire.DirClient:
		l.http.posts = append(l.http.posts, postRec{u, l.postSessionScoped(u)})
	case env.Method == "POST" && u.Dir == wire.DirAgent && (env.Stream == wire.StreamHTTPControl || env.Stream == wire.StreamPOSTReply):
		if post, ok := l.matchPost(env.ConnectionID); ok {
			l.postStatus(post, u)
		}
	case env.Method == "GET" && env.Stream == wire.StreamHTTPControl:
		l.getStatus(u)
	case env.Method == "DELETE" && env.Stream == wire.StreamHTTPControl:
		l.deleteStatus(u)
	}
}

// httpVersion reports the connection's first Streamable HTTP exchange
// over HTTP/1.x: the RFD says the transport MUST use HTTP/2. WebSocket
// stays on an HTTP/1.1 upgrade, and captures made before the version was
// recorded say nothing (Proto empty).
func (l *linter) httpVersion(u unit) {
	env := u.HTTP
	if l.oldHTTP || !strings.HasPrefix(env.Proto, "HTTP/1") || env.Stream == wire.StreamWebSocket || env.Status == 101 {
		return
	}
	if upgrade, _ := headerOK(env, "upgrade"); strings.EqualFold(upgrade, "websocket") {
		return
	}
	l.oldHTTP = true
	l.report("http/http2", []uint64{u.Seq}, "%s %s went over %s; the RFD says Streamable HTTP MUST use HTTP/2", env.Method, env.Path, env.Proto)
}

// matchPost takes the oldest POST of the same connection still waiting,
// else the oldest one sent without a connection id (initialize).
func (l *linter) matchPost(connID string) (postRec, bool) {
	for _, want := range []string{connID, ""} {
		for i, p := range l.http.posts {
			if p.u.HTTP.ConnectionID == want {
				l.http.posts = append(l.http.posts[:i:i], l.http.posts[i+1:]...)
				return p, true
			}
		}
	}
	return postRec{}, false
}

func (l *linter) postStatus(rec postRec, resp unit) {
	post := rec.u
	status := resp.HTTP.Status
	seqs := []uint64{post.Seq, resp.Seq}
	if refusedAtDoor(resp.HTTP) {
		return
	}
	isInit := post.Kind == wire.KindRequest && post.Method == "initialize"
	if isInit && status == 200 {
		if id := resp.HTTP.ConnectionID; id != "" {
			l.http.known[id] = true
		} else {
			l.report("http/connection-id-header", seqs, "initialize was answered 200 without an Acp-Connection-Id header")
		}
	}
	if status == 0 {
		return
	}
	ct := header(post.HTTP, "content-type")
	mt, _, _ := mime.ParseMediaType(ct)
	if isJSON := mt == "application/json"; !isJSON || status == 415 {
		if isJSON {
			l.report("http/content-type", seqs, "a POST with Content-Type %s was refused with 415", ct)
		} else if status != 415 {
			l.report("http/content-type", seqs, "a POST with Content-Type %q was answered %d, want 415", ct, status)
		}
		return
	}
	if post.Kind == wire.KindBatch {
		if status != 501 {
			l.report("http/batch", seqs, "a batch POST was answered %d; the RFD answers batches 501 (some servers accept them)", status)
		}
		return
	}
	connID := post.HTTP.ConnectionID
	switch {
	case !isInit && connID == "":
		if status != 400 {
			l.report("http/missing-connection-id", seqs, "a %s POST without Acp-Connection-Id was answered %d, want 400", what(post), status)
		}
	case connID != "" && len(l.http.known) > 0 && !l.http.known[connID]:
		if status != 404 {
			l.report("http/unknown-connection", seqs, "a POST for unknown connection %s was answered %d, want 404", connID, status)
		}
	case rec.scoped && post.HTTP.SessionID == "":
		if status != 400 {
			l.report("http/missing-session-id", seqs, "a session-scoped %s POST without Acp-Session-Id was answered %d, want 400", what(post), status)
		}
	default:
		want := 202
		if isInit && connID == "" {
			want = 200
		}
		if status != want {
			l.report("http/post-status", seqs, "a %s POST was answered %d, want %d", what(post), status, want)
		}
	}
}

// postSessionScoped: session-scoped requests and notifications, and the
// client's answers to the agent's session-scoped requests (permission).
func (l *linter) postSessionScoped(post unit) bool {
	method := post.Method
	if post.Kind == wire.KindResponse || post.Kind == wire.KindError {
		req, ok := l.rpc.pending.InFlight(wire.DirAgent, post.ID)
		if !ok {
			return false
		}
		method = req.Method
	}
	m, ok := Lookup(method)
	return ok && m.SessionScoped
}

func (l *linter) getStatus(u unit) {
	env, seq := u.HTTP, []uint64{u.Seq}
	if env.Status == 101 {
		if env.ConnectionID == "" {
			l.report("http/connection-id-header", seq, "the WebSocket upgrade (101) carries no Acp-Connection-Id header")
		} else {
			l.http.known[env.ConnectionID] = true
		}
		return
	}
	if env.Status == 0 {
		return
	}
	// The Accept header is judged only when the envelope kept the request's.
	if accept, ok := headerOK(env, "accept"); ok {
		wantsSSE := strings.Contains(accept, "text/event-stream") || strings.Contains(accept, "*/*")
		if !wantsSSE && env.Status != 406 {
			l.report("http/accept", seq, "a GET with Accept %q was answered %d, want 406", accept, env.Status)
			return
		}
		if wantsSSE && env.Status == 406 {
			l.report("http/accept", seq, "a GET accepting text/event-stream was refused with 406")
			return
		}
	}
	if env.Status == 406 {
		return
	}
	l.connectionRouting(u, "GET")
}

func (l *linter) deleteStatus(u unit) {
	if !l.connectionRouting(u, "DELETE") {
		return
	}
	if u.HTTP.Status != 0 && u.HTTP.Status != 202 {
		l.report("http/delete-status", []uint64{u.Seq}, "DELETE for connection %s was answered %d, want 202", u.HTTP.ConnectionID, u.HTTP.Status)
	}
}

// connectionRouting checks the 400/404 answers of GET and DELETE; it
// reports whether the connection id was present and known.
func (l *linter) connectionRouting(u unit, verb string) bool {
	env, seq := u.HTTP, []uint64{u.Seq}
	switch {
	case env.ConnectionID == "":
		if env.Status != 400 {
			l.report("http/missing-connection-id", seq, "a %s without Acp-Connection-Id was answered %d, want 400", verb, env.Status)
		}
		return false
	case len(l.http.known) > 0 && !l.http.known[env.ConnectionID]:
		if env.Status != 404 {
			l.report("http/unknown-connection", seq, "a %s for unknown connection %s was answered %d, want 404", verb, env.ConnectionID, env.Status)
		}
		return false
	}
	return true
}

// refusedAtDoor reports a 401 or 403: a server's or proxy's refusal of
// the caller, which comes before the endpoint's routing.
func refusedAtDoor(env *wire.Envelope) bool {
	return env.Status == 401 || env.Status == 403
}

func what(u unit) string {
	if u.Method != "" {
		return u.Method
	}
	return u.Kind.String()
}

func header(env *wire.Envelope, name string) string {
	v, _ := headerOK(env, name)
	return v
}

func headerOK(env *wire.Envelope, name string) (string, bool) {
	for k, v := range env.Headers {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}
