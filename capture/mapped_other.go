//go:build !linux

package capture

// releaseMapped is a no-op where madvise is not used.
func (r *Reader) releaseMapped() {}
