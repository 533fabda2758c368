//go:build race

package capture

// raceEnabled: the race detector multiplies memory use, so RSS limits
// cannot be checked under it.
const raceEnabled = true
