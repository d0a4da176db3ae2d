//go:build race

package api_test

// raceEnabled reports that the tests run under the race detector, which
// makes the embedded FerretDB too slow for some store calls' deadlines.
const raceEnabled = true
