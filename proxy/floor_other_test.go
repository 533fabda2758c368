//go:build !linux

package proxy

import "os"

// floorInBackground leaves the priority alone where capture does too.
func floorInBackground() {}

// floorDatasync is fsync(2), which bbolt uses where fdatasync(2) is
// missing.
func floorDatasync(f *os.File) error { return f.Sync() }
