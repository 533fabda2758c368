// Command testagent is a small, predictable agent for acpscope's tests and
// benchmarks. Its first argument picks a mode; see package peer for the
// list. It is built from the repository by the tests that use it:
//
//	go build -o /tmp/testagent ./internal/testagent
//	/tmp/testagent echo
package main
