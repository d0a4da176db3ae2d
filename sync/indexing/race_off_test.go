//go:build !race

package indexing

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = false
