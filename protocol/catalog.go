package protocol

import (
	"strings"

	"github.com/acpscope/acpscope/wire"
)

// Stability says how settled a method is.
type Stability uint8

// The stabilities a method can have.
const (
	Unknown   Stability = iota
	Stable              // in the v1 schema
	Unstable            // behind feature flags in the unstable schema
	Legacy              // removed from the schema but still seen
	Extension           // a method starting with "_"
	V2Draft             // only in the v2 draft
	PreAlpha            // the pre-alpha Agent Communication Protocol (on MCP)
	RFDDraft            // a draft RFD, in no schema yet (proxy chains)
)

var stabilityNames = [...]string{"unknown", "stable", "unstable", "legacy", "extension", "v2-draft", "pre-alpha", "rfd-draft"}

// String names the stability as the catalog and --rules print it.
func (s Stability) String() string {
	if int(s) < len(stabilityNames) {
		return stabilityNames[s]
	}
	return "unknown"
}

// Sender says which side may send a method.
type Sender uint8

// The senders of a method.
const (
	FromClient Sender = 1 << iota
	FromAgent
	FromEither = FromClient | FromAgent
)

// Allows reports whether a message travelling in dir may carry the method.
func (s Sender) Allows(dir wire.Dir) bool {
	switch dir {
	case wire.DirClient:
		return s&FromClient != 0
	case wire.DirAgent:
		return s&FromAgent != 0
	}
	return false
}

// String says which way the method travels.
func (s Sender) String() string {
	switch s {
	case FromClient:
		return "client→agent"
	case FromAgent:
		return "agent→client"
	case FromEither:
		return "either"
	}
	return "unknown"
}

// Method describes one method of the catalog.
type Method struct {
	Name   string
	Sender Sender
	// Notification is true for methods that are sent without an id.
	Notification bool
	// SessionScoped methods carry params.sessionId.
	SessionScoped bool
	Stability     Stability
	// Versions lists the protocol versions the method belongs to.
	Versions []int
	// Summary is a few words for tables and help.
	Summary string
}

// InVersion reports whether the method is part of protocol version v.
func (m Method) InVersion(v int) bool {
	for _, x := range m.Versions {
		if x == v {
			return true
		}
	}
	return false
}

var (
	v1   = []int{1}
	v12  = []int{1, 2}
	v2   = []int{2}
	none = []int(nil)
)

// methods is the catalog, from ACP-FACTS.md (schema v1 1.21.0, the
// unstable schema and the v2 draft) and seed 002 for the pre-alpha
// Agent Communication Protocol.
var methods = []Method{
	{"initialize", FromClient, false, false, Stable, v12, "negotiate version and capabilities"},
	{"authenticate", FromClient, false, false, Stable, v1, "authenticate with an advertised method"},
	{"session/new", FromClient, false, false, Stable, v12, "create a session"},
	{"session/load", FromClient, false, true, Stable, v1, "load a session, replaying it as updates"},
	{"session/resume", FromClient, false, true, Stable, v12, "resume a session without replay"},
	{"session/list", FromClient, false, false, Stable, v12, "list sessions"},
	{"session/delete", FromClient, false, true, Stable, v12, "delete a session"},
	{"session/close", FromClient, false, true, Stable, v12, "close a session"},
	{"session/set_mode", FromClient, false, true, Stable, v1, "switch the session mode"},
	{"session/set_config_option", FromClient, false, true, Stable, v12, "set a session config option"},
	{"session/prompt", FromClient, false, true, Stable, v12, "send a user prompt (one turn)"},
	{"session/cancel", FromClient, true, true, Stable, v12, "cancel the running turn"},
	{"logout", FromClient, false, false, Stable, v1, "log out"},
	{"session/update", FromAgent, true, true, Stable, v12, "stream session progress"},
	{"session/request_permission", FromAgent, false, true, Stable, v12, "ask the user to allow a tool call"},
	{"fs/read_text_file", FromAgent, false, true, Stable, v1, "read a file through the client"},
	{"fs/write_text_file", FromAgent, false, true, Stable, v1, "write a file through the client"},
	{"terminal/create", FromAgent, false, true, Stable, v1, "run a command in a client terminal"},
	{"terminal/output", FromAgent, false, true, Stable, v1, "read a terminal's output"},
	{"terminal/wait_for_exit", FromAgent, false, true, Stable, v1, "wait for a terminal command"},
	{"terminal/kill", FromAgent, false, true, Stable, v1, "kill a terminal command"},
	{"terminal/release", FromAgent, false, true, Stable, v1, "release a terminal"},
	{"elicitation/create", FromAgent, false, false, Stable, v12, "ask the user for structured input"},
	{"elicitation/complete", FromAgent, true, false, Stable, v12, "end an elicitation"},
	{"$/cancel_request", FromEither, true, false, Stable, v12, "cancel an in-flight request"},

	{"session/set_model", FromClient, false, true, Legacy, v1, "choose a model (now a config option)"},

	{"session/fork", FromClient, false, true, Unstable, v12, "fork a session"},
	{"session/setTitle", FromClient, false, true, Unstable, v1, "set a session's title"},
	{"providers/list", FromClient, false, false, Unstable, v12, "list model providers"},
	{"providers/set", FromClient, false, false, Unstable, v12, "configure a model provider"},
	{"providers/disable", FromClient, false, false, Unstable, v12, "disable a model provider"},
	{"mcp/connect", FromAgent, false, false, Unstable, v12, "open an MCP connection through the client"},
	{"mcp/message", FromEither, false, false, Unstable, v12, "carry an MCP message"},
	{"mcp/disconnect", FromAgent, false, false, Unstable, v12, "close an MCP connection"},
	{"nes/start", FromClient, false, false, Unstable, v12, "start next-edit suggestions"},
	{"nes/suggest", FromClient, false, false, Unstable, v12, "ask for a next-edit suggestion"},
	{"nes/accept", FromClient, true, false, Unstable, v12, "accept a suggestion"},
	{"nes/reject", FromClient, true, false, Unstable, v12, "reject a suggestion"},
	{"nes/close", FromClient, false, false, Unstable, v12, "stop next-edit suggestions"},
	{"document/didOpen", FromClient, true, false, Unstable, v12, "a document was opened"},
	{"document/didChange", FromClient, true, false, Unstable, v12, "a document changed"},
	{"document/didClose", FromClient, true, false, Unstable, v12, "a document was closed"},
	{"document/didSave", FromClient, true, false, Unstable, v12, "a document was saved"},
	{"document/didFocus", FromClient, true, false, Unstable, v12, "a document got focus"},

	{"auth/login", FromClient, false, false, V2Draft, v2, "log in (v2 authenticate)"},
	{"auth/logout", FromClient, false, false, V2Draft, v2, "log out (v2)"},

	// Proxy chains: the conductor initializes each proxy with
	// _proxy/initialize; the wrappers carry messages to and from a
	// proxy's successor (Unwrap reads what they carry). The RFD text
	// spells them without the underscore; the reference conductor sends
	// the extension form.
	{"_proxy/initialize", FromClient, false, false, RFDDraft, v12, "initialize a proxy component (it has a successor)"},
	{"proxy/initialize", FromClient, false, false, RFDDraft, v12, "initialize a proxy component (the RFD's spelling)"},
	{"_proxy/successor/request", FromEither, false, false, RFDDraft, v12, "carry a request to or from a proxy's successor"},
	{"_proxy/successor/notification", FromEither, true, false, RFDDraft, v12, "carry a notification to or from a proxy's successor"},
	{"_proxy/successor", FromEither, false, false, RFDDraft, v12, "carry a message to or from a proxy's successor"},
	{"proxy/successor", FromEither, false, false, RFDDraft, v12, "carry a message to or from a proxy's successor (the RFD's spelling)"},

	{"agents/list", FromClient, false, false, PreAlpha, none, "list agents (Agent Communication Protocol)"},
	{"agents/run", FromClient, false, false, PreAlpha, none, "run an agent (Agent Communication Protocol)"},
	{"notifications/agents/run/progress", FromAgent, true, false, PreAlpha, none, "a run's output delta"},
}

// unstablePrefixes name the method families of the unstable schema.
var unstablePrefixes = []string{"providers/", "mcp/", "nes/", "document/"}

var methodIndex = func() map[string]Method {
	ix := make(map[string]Method, len(methods))
	for _, m := range methods {
		ix[m.Name] = m
	}
	return ix
}()

// Lookup returns the catalog entry for a method name. Extension methods
// (a leading "_") are known as Extension, sent by either side, with
// notification-ness unknowable from the name; other unknown names give
// ok == false.
func Lookup(name string) (Method, bool) {
	if m, ok := methodIndex[name]; ok {
		return m, true
	}
	if strings.HasPrefix(name, "_") {
		return Method{Name: name, Sender: FromEither, Stability: Extension, Versions: v12, Summary: "extension method"}, true
	}
	// Unstable families grow faster than any table: a new member is
	// unstable, not unknown.
	for _, prefix := range unstablePrefixes {
		if strings.HasPrefix(name, prefix) {
			return Method{Name: name, Sender: FromEither, Stability: Unstable, Versions: v12, Summary: "unstable method"}, true
		}
	}
	return Method{Name: name}, false
}

// Methods returns the whole catalog in a fixed order.
func Methods() []Method {
	out := make([]Method, len(methods))
	copy(out, methods)
	return out
}

// LookupVersion is Lookup under a negotiated protocol version: it also
// reports whether the method belongs to that version (extensions always
// do; pre-alpha methods belong to none but are reported as belonging so
// that MCP-based traffic is not flagged for its version).
func LookupVersion(name string, version int) (m Method, known, inVersion bool) {
	m, known = Lookup(name)
	if !known {
		return m, false, false
	}
	switch m.Stability {
	case Extension, PreAlpha:
		return m, true, true
	}
	return m, true, m.InVersion(version)
}

// Which methods make a sessionId valid once answered (session/new and
// session/fork from the result, session/load and session/resume from the
// params) is written where it is used, in lint_acp.go and transcript.go;
// the catalog is to become its one source.

// lifecycleMethods should not travel in a batch (seed 000).
var lifecycleMethods = map[string]bool{
	"initialize": true, "authenticate": true, "session/new": true, "session/load": true, "session/prompt": true,
}
