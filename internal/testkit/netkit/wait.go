package netkit

import (
	"testing"
	"time"
)

// CondWait bounds waits on conditions in the transports' tests; the
// machine is shared, so it is generous and never a speed assertion.
const CondWait = 90 * time.Second

// WaitLong waits for cond with the generous bound; what says what was
// awaited when it fails.
func WaitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(CondWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, CondWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
