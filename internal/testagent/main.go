// Command testagent is a small, predictable agent for acpscope's tests and
// benchmarks. Its first argument picks a mode; see package peer for the
// list. It is built from the repository by the tests that use it:
//
//	go build -o /tmp/testagent ./internal/testagent
//	/tmp/testagent echo
package main

import (
	"os"

	"github.com/acpscope/acpscope/internal/testagent/peer"
)

func main() { os.Exit(peer.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
