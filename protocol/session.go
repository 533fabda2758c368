package protocol

import "github.com/acpscope/acpscope/wire"

// The requests that open a session, and what follows from them. The
// store, redaction, the transports and lint all ask here, so they agree.

// opening are the requests that make a sessionId valid once answered:
// session/new and session/fork mint one (it arrives in the result),
// session/load and session/resume name one (in params).
var opening = [...]string{"session/new", "session/fork", "session/load", "session/resume"}

// OpensSession reports whether a request of method opens a session.
func OpensSession(method string) bool {
	for _, m := range opening {
		if m == method {
			return true
		}
	}
	return false
}

// MintsSession reports whether the result of method carries the sessionId
// it created (session/new, session/fork): the only place that id appears
// before the agent speaks of it.
func MintsSession(method string) bool {
	return method == "session/new" || method == "session/fork"
}

// ResumesSession reports whether a request of method reopens a session
// the client names (session/load, session/resume) rather than minting one:
// the session already exists, so its stream can carry messages (the
// history session/load replays) that must reach the client before the
// answer does.
func ResumesSession(method string) bool {
	return method == "session/load" || method == "session/resume"
}

// ConnectionLevel reports whether the response to a request of method
// belongs to the connection rather than to a session, though the request
// may name one: a client cannot listen on a session's stream before the
// session exists, so the session-opening requests are answered on the
// connection's (Streamable HTTP RFD).
func ConnectionLevel(method string) bool { return OpensSession(method) }

// ConnectionLevelMethods returns the ConnectionLevel methods as a set,
// for callers that keep one.
func ConnectionLevelMethods() map[string]bool {
	set := make(map[string]bool, len(opening))
	for _, m := range opening {
		set[m] = true
	}
	return set
}

// CarriesMCPServers reports whether the params of method carry
// mcpServers, each with its env and headers: the session-opening requests.
func CarriesMCPServers(method string) bool { return OpensSession(method) }

// ResponseSession attributes a response to a session. Responses carry no
// sessionId, so it is the session of the request they answer (method,
// requestSession), or for session/new and session/fork the one their
// result names. result is the response's "result" member, nil for none.
func ResponseSession(method, requestSession string, result []byte) string {
	if MintsSession(method) && len(result) > 0 && result[0] == '{' {
		if s := wire.StringMember(result, "sessionId"); s != "" {
			return s
		}
	}
	return requestSession
}

// NegotiatedVersion returns the protocol version the capture's own peers
// (hop 0) agreed on: the protocolVersion of the first answered initialize,
// 0 when none was answered. A viewer or a schema picks its rules by it.
func NegotiatedVersion(msgs []Msg) int {
	p := pairs[bool]{}
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Kind == wire.KindRequest && m.Hop == 0 && IsInitialize(m.Method):
			p.of(m.Conn).Request(m.Dir, m.ID, true)
		case m.Kind == wire.KindResponse:
			if _, ok := p.of(m.Conn).Response(m.Dir, m.ID); !ok {
				continue
			}
			var res struct {
				Result struct {
					ProtocolVersion int `json:"protocolVersion"`
				} `json:"result"`
			}
			if decode(m.Body, &res) && res.Result.ProtocolVersion > 0 {
				return res.Result.ProtocolVersion
			}
		}
	}
	return 0
}
