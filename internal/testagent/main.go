package main

import (
	"os"

	"github.com/acpscope/acpscope/internal/testagent/peer"
)

func main() { os.Exit(peer.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
