// Package cli is acpscope's command line: Main reads the first word, finds
// the subcommand in the list in commands.go, parses its flags (pflag, GNU
// style) and runs it. Each subcommand lives in its own cmd_*.go file: its
// synopsis, examples and flags, and the function that runs it, which only
// wires flags to the library packages and prints what they return.
package cli
