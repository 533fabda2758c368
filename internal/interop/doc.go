// Package interop holds acpscope's interoperability tests and nothing
// else: ACP peers that no one on this project wrote — the example agent
// and client of github.com/coder/acp-go-sdk and an agent and client built
// on the official TypeScript SDK (@agentclientprotocol/sdk) — talk to each
// other and to acpscope's demo peers through the real `acpscope -- AGENT`
// stdio proxy, and the tests compare the bytes at both ends and in the
// capture.
//
// # Concurrency
//
// Each test run owns its processes (client, proxy) and two copying
// goroutines that join the client's socket to the proxy's pipes; all of
// them end before the run returns, on success, failure or timeout.
package interop
