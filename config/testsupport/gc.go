package testsupport

import (
	"os"
	"runtime/debug"
	"strconv"
)

// CollectLessOften sets the garbage collector's target (GOGC) of the test
// binary to percent, unless GOGC is set in the environment or the race
// detector runs (its shadow memory grows with the heap). A package whose
// tests allocate much and keep little calls it from its TestMain: at the
// default 100 the collector marks the live heap twice as often as at 200,
// for a peak heap about twice the live one instead of three times. Tests
// that bound memory measure the live heap after a collection, or the
// bytes allocated, which the target does not change.
func CollectLessOften(percent int) {
	if os.Getenv("GOGC") == "" && !raceEnabled {
		debug.SetGCPercent(percent)
	}
}

// ChildGOGC returns the GOGC for the processes a test starts, by the rule
// of CollectLessOften: the environment's GOGC when set, the default (100)
// under the race detector, else percent.
func ChildGOGC(percent int) string {
	switch {
	case os.Getenv("GOGC") != "":
		return os.Getenv("GOGC")
	case raceEnabled:
		return "100"
	}
	return strconv.Itoa(percent)
}
