//go:build race

package proxy

// raceEnabled: the race detector slows the capture's classification of
// huge lines tenfold; tests that only repeat a size covered elsewhere
// skip it under -race to keep the package's tests quick.
const raceEnabled = true
