package capture

import "slices"

// copyStep is the most appendInSteps copies at once.
const copyStep = 1 << 20

// appendInSteps appends src to dst a megabyte at a time. The Go runtime
// cannot preempt a goroutine inside one copy, and a garbage collection
// that needs to stop it waits, spinning, with the world stopped or about
// to be, for as long as the copy takes: tens of milliseconds for a
// 100 MB body, during which the proxy forwards nothing (see
// bodyPieceBytes). Between steps the goroutine can be stopped at once.
func appendInSteps(dst, src []byte) []byte {
	dst = slices.Grow(dst, len(src))
	for len(src) > 0 {
		n := min(len(src), copyStep)
		dst = append(dst, src[:n]...)
		src = src[n:]
	}
	return dst
}
