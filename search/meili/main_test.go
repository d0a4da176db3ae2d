package meili

import (
	"flag"
	"os"
	"runtime/debug"
	"testing"
)

// testGCPercent is the collector's target while the tests (not the
// benchmarks) run: the simulator's requests and answers are JSON decoded
// and encoded on both sides, and at the default of 100 about an eighth of
// the package's CPU went to marking them. The live heap is small (the
// package's tests peak at about 0.2 GB at the default).
const testGCPercent = 400

// TestMain runs the tests with the collector at testGCPercent, unless
// GOGC is set or benchmarks run (their CPU and allocations per op are
// measured as the service runs: the default).
func TestMain(m *testing.M) {
	flag.Parse()
	if b := flag.Lookup("test.bench"); os.Getenv("GOGC") == "" && (b == nil || b.Value.String() == "") {
		debug.SetGCPercent(testGCPercent)
	}
	os.Exit(m.Run())
}
