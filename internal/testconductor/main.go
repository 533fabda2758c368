// Command testconductor is a small proxy-chain conductor and proxy
// component for acpscope's tests, following the RFD "Agent Extensions via
// ACP Proxies" and the reference conductor's wire format: it initializes
// proxies with _proxy/initialize and carries what a proxy exchanges with
// its successor in _proxy/successor/request and _proxy/successor/notification
// (or the newer single _proxy/successor). It is built by the tests that
// use it:
//
//	go build -o /tmp/testconductor ./internal/testconductor
//
// Modes:
//
//	chain [--trace FILE] [--single] "PROXY ARGS…" … "AGENT ARGS…"
//	        a conductor on stdio: each argument is a component's command
//	        line (split at spaces, as the reference conductor takes them);
//	        all but the last are proxies. --trace writes the
//	        conductor's trace (one JSON event per line, the reference
//	        conductor's --trace format); --single wraps in _proxy/successor.
//	proxy [--single] [--mcp-server]
//	        a proxy component: forwards everything, adds a line of context
//	        to each prompt it forwards, and with --mcp-server offers an MCP
//	        server over ACP ("proxy-tools", one tool "echo") in every
//	        session/new it forwards, answering the agent's MCP itself.
//
// It uses only the standard library, not acpscope's packages, so what it
// writes is what the RFD says rather than what acpscope reads.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "testconductor: mode required: chain or proxy")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "chain":
		err = runChain(os.Args[2:], os.Stdin, os.Stdout)
	case "proxy":
		err = runProxy(os.Args[2:], os.Stdin, os.Stdout)
	default:
		err = fmt.Errorf("unknown mode %q: want chain or proxy", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testconductor: %v\n", err)
		os.Exit(1)
	}
}
