//go:build race

package processtest

// raceEnabled tells whether the race detector is on.
const raceEnabled = true
