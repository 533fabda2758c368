package capture

// The roles a capture can have: which acpscope command recorded it.
const (
	RoleProxy     = "proxy"      // the stdio proxy, acpscope -- AGENT CMD…
	RoleProxyHTTP = "proxy-http" // acpscope proxy: an HTTP/WebSocket reverse proxy
	RoleServe     = "serve"      // acpscope serve: a stdio agent served over HTTP
	RoleConnect   = "connect"    // acpscope connect: a stdio editor reaching a remote agent
	RoleReplay    = "replay"     // acpscope replay, driving an agent
	RoleImport    = "import"     // acpscope import
	RoleExport    = "export"     // a file acpscope export wrote (a bug report)
)

// Role says which command recorded a capture, from what its metadata
// holds: the transport, and which of the listen address (we served) and
// the upstream (we reached out) it names. Captures from before those
// were recorded fall back to the command in their argv; "" when nothing
// tells.
func Role(m Meta) string {
	switch {
	case m.Transport == "replay":
		return RoleReplay
	case m.Transport == "import":
		return RoleImport
	case m.Notes["exportedFrom"] != "":
		return RoleExport
	case m.Transport == "stdio":
		return RoleProxy
	case m.Transport != "http" && m.Transport != "ws":
		return ""
	case m.Listen != "" && m.Upstream != "":
		return RoleProxyHTTP
	case m.Listen != "":
		return RoleServe
	case m.Upstream != "":
		return RoleConnect
	}
	if len(m.Argv) > 0 {
		switch m.Argv[0] {
		case "proxy":
			return RoleProxyHTTP
		case "connect":
			return RoleConnect
		}
	}
	return ""
}
