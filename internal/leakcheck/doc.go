// Package leakcheck is the planted-secret corpus that every export format
// is tested against: a real capture, written through capture's Writer,
// holding fake but well-formed credentials in every place a session puts
// them (message params, results, errors, _meta, tool calls, terminals,
// mcpServers, file contents, stderr, HTTP headers, URLs, the capture's own
// command line), and a check that an export holds none of them, nor any
// credential fingerprint. It is imported only by tests.
//
// A new export format joins the check with one line in leakcheck_test.go:
//
//	{Name: "har", Export: har.Export},
//
// # Concurrency
//
// It starts no goroutines: the corpus is written and checked on the
// calling test's goroutine (the capture Writer it uses owns its own).
package leakcheck
