package memindex

import (
	"flag"
	"os"
	"runtime/debug"
	"testing"
)

// testGCPercent is the collector's target while the tests (not the
// benchmarks) run: the agreement tests allocate generated documents,
// indexes and the reference's pages, and at the default of 100 about a
// seventh of the package's CPU went to marking. At 400 the package's
// tests take about 0.5 GB instead of 0.25 GB.
const testGCPercent = 400

// TestMain runs the tests with the collector at testGCPercent, unless
// GOGC is set, benchmarks run (their CPU and allocations per op are
// measured as the service runs: the default), or the race detector is on
// (its bookkeeping multiplies the heap).
func TestMain(m *testing.M) {
	flag.Parse()
	if b := flag.Lookup("test.bench"); os.Getenv("GOGC") == "" && !raceEnabled && (b == nil || b.Value.String() == "") {
		debug.SetGCPercent(testGCPercent)
	}
	os.Exit(m.Run())
}
