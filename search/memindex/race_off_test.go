//go:build !race

package memindex

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = false
