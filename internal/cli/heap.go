package cli

import (
	"os"
	"runtime/debug"
)

// copyingHeap sets the garbage collector of an export or import, which
// promise a peak of 64 MiB plus twice the largest message: each record is
// garbage once written, and at the default pace the heap grew to twice
// what was live before a collection, enough, with the mapped pages and
// the binary, to cross the bound on a busy machine (63–70 MiB for a
// million records). Collecting at half that growth keeps the peak near
// 50 MiB at no measurable cost in time.
func copyingHeap() { gcPace(50) }

// recordingHeap sets the garbage collector of a proxy that records. What
// capture leaves behind is bodies and bbolt's page buffers, a few
// megabytes a commit with few pointers in them: cheap to collect, and
// collected sooner, the memory they held is reused sooner. Why that helps
// is not measured (page faults were a few percent of the proxy's CPU;
// warmer caches are the likelier part); what it did is. On two cores of a
// virtual machine (acpscope bench, builds alternating run by run), paced
// at a million 200 B lines a second, five runs lost 263k–445k lines
// against 490k–632k at the default pace, and a throwaway switch over the
// pace gave medians of 231k lost at 25, 334k at 50, 437k at 100 and 443k
// at 10. Round-trip p99 stayed within 1.3× the minimal forwarder in 5–6
// runs of 10 against 0–4, over five invocations each. Flat out (six
// pairs), echoes of 20 and 100 MB (three), SSE through the HTTP proxy
// (three) and peak RSS with a 100 MiB line moved within their usual
// spread.
func recordingHeap() { gcPace(25) }

// gcPace sets the garbage collector's pace unless GOGC in the
// environment already chose one: whoever set it knows their memory and
// their machine better than a default measured on ours.
func gcPace(percent int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}
