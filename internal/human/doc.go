// Package human is how acpscope writes quantities for people and reads
// the ones they type: sizes in IEC units (68.0 KiB), durations rounded to
// what a reader wants and counted in days beyond one (1.5ms, 2.35s, 30d),
// and long identifiers shortened to their distinctive ends. The command
// line and the inspector both print through it, so a size or a session
// id reads the same in either.
package human
