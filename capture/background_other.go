//go:build !linux

package capture

// runInBackground does nothing where threads cannot be reniced one by one.
func runInBackground() {}
