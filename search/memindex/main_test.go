package memindex

import (
	"context"
	"flag"
	"os"
	"runtime/debug"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
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

// alongside runs index (the index's answer) on this goroutine and ref
// (the reference's answer, from package searchtest) on another at the
// same time, and returns ref's result once both are done. A third to a
// half of an agreement loop's CPU is the reference's: computed beside the
// index's answer, it takes the second core when the loop runs alone. The
// reference reads no knob and nothing the index writes (each Reference
// is used by one goroutine at a time: the caller does not touch it while
// ref runs).
func alongside[T any](index func(), ref func() T) T {
	done := make(chan T, 1)
	go func() { done <- ref() }()
	index()
	return <-done
}

// searchAlongside runs q on the index x and, alongside, on the reference:
// the reference's page with its facets, then the index's answer.
func searchAlongside(ctx context.Context, x *Index, ref *searchtest.Reference, q search.EventQuery) (refPage, search.Result, error) {
	var (
		got search.Result
		err error
	)
	wp := alongside(func() { got, err = x.Search(ctx, q) }, func() refPage {
		res, facets := ref.EventsAndFacets(q)
		return refPage{res, facets}
	})
	return wp, got, err
}

// refPage is a page of the reference with its facets (EventsAndFacets).
type refPage struct {
	res    search.Result
	facets map[string]map[string]int
}
