//go:build race

package indexing

// raceEnabled reports that the tests run under the race detector, whose
// memory overhead (5 to 10 times) makes the full-size series test need
// more memory than a CI machine may have; the scaled variant runs there.
const raceEnabled = true
