// Command acpscope is a transparent man-in-the-middle for the Agent Client
// Protocol: it proxies stdio, HTTP/SSE and WebSocket traffic between an
// editor and an agent byte for byte, records every message in a capture,
// and lets you inspect, lint, replay, diff and export what it saw.
//
// The command line itself lives in internal/cli.
package main

import (
	"os"

	"github.com/acpscope/acpscope/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
