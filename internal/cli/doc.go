// Package cli is acpscope's command line: Main reads the first word, finds
// the subcommand in the list in commands.go, parses its flags (pflag, GNU
// style) and runs it. Each subcommand lives in its own cmd_*.go file: its
// synopsis, examples and flags, and the function that runs it, which only
// wires flags to the library packages and prints what they return.
// It knows no ACP fact and no store detail of its own: those belong to
// protocol and capture, and a command only asks them.
//
// # Concurrency
//
// A command runs on Main's goroutine; the goroutines doing the work
// belong to the library packages it calls, which stop them before they
// return. The one cli starts itself is replay's stderr pump, which copies
// the agent's log to ours and into the capture, ends when the agent's
// stderr closes, and is waited for before the command returns. Commands
// that run until interrupted (tail, replay, bench, the demo peers) stop
// through a signal.NotifyContext.
package cli
