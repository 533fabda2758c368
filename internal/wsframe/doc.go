// Package wsframe reads WebSocket frames (RFC 6455) as they pass between
// two peers, for a relay that forwards every byte it reads unchanged and
// keeps a decoded copy of each message for the capture: frame headers,
// unmasking, close payloads, and the permessage-deflate extension
// (RFC 7692) for messages sent compressed. The one frame it writes is the
// close a relay sends on its own (AppendClose).
//
// # Concurrency
//
// It starts no goroutines. An Inflater belongs to one direction of one
// connection; everything else is a pure function.
package wsframe
