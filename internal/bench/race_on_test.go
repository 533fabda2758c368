//go:build race

package bench

// raceEnabled: the proxy process is this race-instrumented test binary,
// ten times slower on huge lines; the smoke test sends smaller ones.
const raceEnabled = true
