// Package demo holds acpscope's built-in demo peers: a scripted but real
// ACP v1 agent (RunAgent) and client (RunClient) that speak
// newline-delimited JSON-RPC 2.0 over any reader/writer pair. `acpscope
// demo` runs them against each other through the stdio proxy, and the
// proxy, replay and export tests use them as peers whose every message is
// known in advance. They never touch real files: the client answers fs/*
// from an in-memory workspace and simulates terminals. They are built on
// a small JSON-RPC layer of their own (rpc.go) rather than an SDK, so that
// what they put on the wire is exactly what this package says.
//
// # Concurrency
//
// Each peer owns one connection whose single reader goroutine decodes
// incoming lines, delivers responses to waiting calls and runs handlers.
// Writes are serialised by a mutex so each message is one write of one
// line. The agent runs each session/prompt turn on its own goroutine,
// tracked by a WaitGroup and stopped through its context (session/cancel,
// end of input); RunAgent returns only after every turn has ended. The
// client handles the agent's requests on the reader goroutine, so its
// transcript is in wire order. Closing the input ends the reader; both
// Run functions return once it has stopped.
package demo
