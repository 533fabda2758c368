//go:build !linux

package main

import "os"

// runInBackground leaves the priority alone where capture does too.
func runInBackground() {}

// datasync is fsync(2), which bbolt uses where fdatasync(2) is missing.
func datasync(f *os.File) error { return f.Sync() }
