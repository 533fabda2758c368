//go:build !linux

package capture

import bolt "go.etcd.io/bbolt"

// releaseMapped is a no-op where madvise is not used.
func (r *Reader) releaseMapped() {}

// releaseRange is a no-op where madvise is not used.
func releaseRange([]byte) {}

// releaseDB is a no-op where madvise is not used.
func releaseDB(*bolt.DB, string) {}
