//go:build !race

package sync

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = false
