// Package testkit holds the small helpers several packages' tests share:
// a buffer one goroutine writes while another reads, golden-file
// comparison, and where two byte strings part. It is imported only by
// tests.
//
// # Concurrency
//
// It starts no goroutines. A Buffer is safe for one writer and
// concurrent readers; the golden helpers belong to the test calling them.
package testkit
