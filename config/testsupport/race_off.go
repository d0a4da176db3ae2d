//go:build !race

package testsupport

// raceEnabled reports that the binary runs under the race detector.
const raceEnabled = false
