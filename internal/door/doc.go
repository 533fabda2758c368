// Package door is the listening side of acpscope's HTTP transports (the
// reverse proxy and serve): Listen opens the socket, on loopback unless
// told otherwise and warning when not, and turns a taken port into
// advice; Serve speaks HTTP/1.1, cleartext HTTP/2 with prior knowledge
// and, given a certificate, HTTPS with HTTP/2 through ALPN, until its
// context ends; and Guard checks every request before anything else runs:
// its Host and Origin against DNS rebinding and other sites' pages, and
// the bearer token. It knows nothing of ACP, agents or captures: what a
// request carries is the handler's business.
//
// # Concurrency
//
// Serve runs the server in one goroutine of its own, which ends when the
// server is shut down as Serve's context ends; requests run on the
// goroutines net/http gives them. A Guard is immutable once made and safe
// for concurrent use.
package door
