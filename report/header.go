package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/acpscope/acpscope/protocol"
	"github.com/acpscope/acpscope/wire"
)

// header is what the handshake and the session setup said: who talked,
// in which protocol version, able to do what, in which modes.
type header struct {
	Protocol   string
	Client     string
	Agent      string
	ClientCaps []fact
	AgentCaps  []fact
	Auth       []string
	Sessions   []sessionHeader
}

// sessionHeader is one session's setup: its modes, configuration options
// and models as the agent offered them.
type sessionHeader struct {
	ID, Origin string
	Mode       string // the current mode at the end of the capture
	Modes      []choice
	Config     []choice
	Models     []choice
}

// choice is a mode, a model or a configuration option.
type choice struct {
	ID, Name, Value, Detail string
	Current                 bool
}

// readHeader finds the handshake and each session's setup in msgs.
func readHeader(msgs []protocol.Msg, t *protocol.Transcript) header {
	var h header
	if t.Version != 0 {
		h.Protocol = fmt.Sprintf("v%d", t.Version)
	}
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Method == "initialize" && m.Kind == wire.KindRequest && h.ClientCaps == nil:
			p := object(wire.Value(m.Body, "params"))
			h.Client = implementation(obj(p, "clientInfo"))
			h.ClientCaps = flatten(obj(p, "clientCapabilities"))
			if h.Protocol == "" && p["protocolVersion"] != nil {
				h.Protocol = fmt.Sprintf("v%v (asked by the client)", p["protocolVersion"])
			}
		case m.Method == "initialize" && m.Kind == wire.KindResponse && h.AgentCaps == nil:
			r := object(wire.Value(m.Body, "result"))
			h.Agent = implementation(obj(r, "agentInfo"))
			h.AgentCaps = flatten(obj(r, "agentCapabilities"))
			for _, a := range arr(r, "authMethods") {
				am, _ := a.(map[string]any)
				h.Auth = append(h.Auth, strings.TrimSpace(str(am, "id")+" "+paren(str(am, "name"))))
			}
		case m.Kind == wire.KindResponse && protocol.OpensSession(m.Method) && m.Session != "":
			h.Sessions = append(h.Sessions, sessionSetup(m, t))
		}
	}
	return h
}

// sessionSetup reads the modes, configuration options and models of a
// session/new (load, resume, fork) result.
func sessionSetup(m *protocol.Msg, t *protocol.Transcript) sessionHeader {
	r := object(wire.Value(m.Body, "result"))
	sh := sessionHeader{ID: m.Session, Origin: strings.TrimPrefix(m.Method, "session/")}
	if s := t.Session(m.Session); s != nil {
		sh.Mode = s.Mode
	}
	modes := obj(r, "modes")
	for _, x := range arr(modes, "availableModes") {
		mm, _ := x.(map[string]any)
		id := str(mm, "id")
		sh.Modes = append(sh.Modes, choice{ID: id, Name: str(mm, "name"), Detail: str(mm, "description"), Current: id == str(modes, "currentModeId")})
	}
	for _, x := range arr(r, "configOptions") {
		c, _ := x.(map[string]any)
		var opts []string
		for _, o := range arr(c, "options") {
			om, _ := o.(map[string]any)
			opts = append(opts, firstOf(str(om, "value"), str(om, "id"), str(om, "name")))
		}
		sh.Config = append(sh.Config, choice{ID: str(c, "id"), Name: str(c, "name"), Value: scalar(c["currentValue"]), Detail: strings.Join(opts, ", ")})
	}
	models := obj(r, "models")
	for _, x := range arr(models, "availableModels") {
		mm, _ := x.(map[string]any)
		id := str(mm, "modelId")
		sh.Models = append(sh.Models, choice{ID: id, Name: str(mm, "name"), Detail: str(mm, "description"), Current: id == str(models, "currentModelId")})
	}
	return sh
}

// implementation names a clientInfo or agentInfo: "zed 0.201.3 (Zed)".
func implementation(m map[string]any) string {
	s := strings.TrimSpace(str(m, "name") + " " + str(m, "version"))
	if t := str(m, "title"); t != "" && t != str(m, "name") {
		s += " (" + t + ")"
	}
	return s
}

// flatten lists an object's leaves as dotted paths: capabilities read as
// "fs.readTextFile  true".
func flatten(m map[string]any) []fact {
	var fs []fact
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		o, ok := v.(map[string]any)
		if !ok || len(o) == 0 {
			fs = append(fs, fact{prefix, scalar(v)})
			return
		}
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, o[k])
		}
	}
	if len(m) > 0 {
		walk("", m)
	}
	return fs
}

// scalar renders a JSON value on one line, long ones cut.
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return cut(string(b), 200)
}

func object(raw []byte) map[string]any {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if len(raw) == 0 || d.Decode(&m) != nil {
		return nil
	}
	return m
}

func obj(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
func arr(m map[string]any, k string) []any          { a, _ := m[k].([]any); return a }
func str(m map[string]any, k string) string         { s, _ := m[k].(string); return s }

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// cut shortens s to n bytes at a rune boundary, marking the cut.
func cut(s string, n int) string {
	s, more := clip(s, n)
	if more > 0 {
		s += "…"
	}
	return s
}

// clip shortens s to n bytes at a rune boundary and says how many bytes
// it left out.
func clip(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n], len(s) - n
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
