//go:build !linux

package capture

import (
	"os"

	bolt "go.etcd.io/bbolt"
)

// releaseMapped is a no-op where madvise is not used.
func (r *Reader) releaseMapped() {}

// releaseRange is a no-op where madvise is not used.
func releaseRange([]byte) {}

// releaseDB is a no-op where madvise is not used.
func releaseDB(*bolt.DB, string) {}

// uncache does nothing where posix_fadvise is not used.
func uncache(*os.File, int64, int64) {}
