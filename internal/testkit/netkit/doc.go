// Package netkit holds what the transports' tests share: HTTP servers and
// clients speaking each HTTP version, a Recorder that keeps what a
// transport recorded, a fake upstream speaking three server dialects,
// the requests every guarded listener must refuse, and the build of the
// test agent. Only tests import it; it knows nothing of the transports
// it helps test.
//
// # Concurrency
//
// A Recorder is safe for concurrent use, as a transport's recorder must
// be. FakeUpstream serves each request on the goroutine net/http gives it;
// its GET streams end when their client leaves or at DELETE.
package netkit
