// Package tap is the one hook through which every transport (the stdio
// proxy, the HTTP and WebSocket reverse proxy, connect and serve) hands
// the capture what it carried: Recorder, which *capture.Writer implements.
// It knows nothing of how traffic is forwarded, stored or shown; it only
// says what a transport passes on and the promises both sides keep.
//
// # Concurrency
//
// A Recorder is called from whichever goroutine carried the bytes (a
// pump, a request handler, a stream reader), several at once, so an
// implementation must be safe for concurrent use; and it must never
// block, so that capture can never stall or slow the wire.
package tap
