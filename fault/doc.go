// Package fault changes ACP traffic on purpose, and records that it did:
// fault plans (a YAML file of rules, each a capture filter plus actions:
// delay, drop, duplicate, reorder, rewrite, replace, truncate, corrupt,
// pad, answer on behalf of the other side, inject, close, kill), holding
// messages for a person to edit, forward or drop (intercept), and
// injecting messages by hand (send). The Engine is the tap.Interceptor a
// transport is given; everything it does goes through the transport's
// tap.Port, which records each altered message with a protocol.Fault.
//
// A plan's seed makes its random choices (random delays, probabilities,
// shuffles, corrupted bytes) the same on every run that sees the same
// messages in the same order: each rule draws from its own generator per
// direction, so traffic in one direction does not move the other's.
//
// # Concurrency
//
// An Engine is safe for concurrent use. Each connection's Conn is called
// by the transport's two readers, one per direction; a direction's state
// (its reorder windows, its held message) is guarded by its own lock and
// the rule counters by the engine's. A reorder window's flush timer and a
// Control's per-client readers are the goroutines the package starts;
// timers stop when their window empties, a Control's goroutines when its
// listener closes (Control.Close) or the client hangs up.
package fault
