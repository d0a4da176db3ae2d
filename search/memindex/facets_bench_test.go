package memindex

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/calendar/eventcal/search"
)

// facetQueries returns the facet rows of the load benchmark over the
// window from now: what /events?facets=categories,venue&categories=N sends
// for an anonymous caller (a count-only query without protected events),
// the same over every category, and the filtered list row with facets;
// and the list pages of one category and of the filtered row.
func facetQueries(now int64) []benchQuery {
	w := func(f func(q *search.EventQuery)) search.EventQuery { return with(now, f) }
	facets := []string{search.FacetCategories, search.FacetVenue}
	return []benchQuery{
		{"categories,venue of one category", w(func(q *search.EventQuery) { q.CategoryIDs, q.Facets, q.Limit = []int64{7}, facets, 0 })},
		{"categories,venue of every event", w(func(q *search.EventQuery) { q.Facets, q.Limit = facets, 0 })},
		{"every facet, dates+category+featured", w(func(q *search.EventQuery) {
			q.StartGTE, q.EndLTE = search.Some(now+30*86400), search.Some(now+400*86400)
			q.CategoryIDs, q.Featured, q.Facets, q.Limit = []int64{7}, search.Some(true), search.EventFacets, 0
		})},
		{"categories,venue of one category, one month", w(func(q *search.EventQuery) {
			q.StartGTE, q.EndLTE = search.Some(now+100*86400), search.Some(now+130*86400)
			q.CategoryIDs, q.Facets, q.Limit = []int64{7}, facets, 0
		})},
		// The list pages that come with them: the page of the facet row
		// (one category) and the filtered row.
		{"list page of one category", w(func(q *search.EventQuery) { q.CategoryIDs = []int64{7} })},
		{"list page, dates+category+featured", w(func(q *search.EventQuery) {
			q.StartGTE, q.EndLTE = search.Some(now+30*86400), search.Some(now+400*86400)
			q.CategoryIDs, q.Featured = []int64{7}, search.Some(true)
		})},
	}
}

// BenchmarkFacet measures the facet rows (facetQueries) at 100,000 events
// and at the sizes FACET_BENCH_EVENTS lists (comma-separated; 1000000
// takes about 4 GB and a minute to build):
// go test ./search/memindex -run '^$' -bench Facet -benchtime 20x.
func BenchmarkFacet(b *testing.B) {
	sizes := []int{100000}
	for _, s := range strings.Split(os.Getenv("FACET_BENCH_EVENTS"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		x, now := benchIndex(n)
		for _, c := range facetQueries(now) {
			b.Run(fmt.Sprintf("%d/%s", n, c.name), func(b *testing.B) {
				cpu0 := cpuTime()
				for b.Loop() {
					if _, err := x.Search(b.Context(), c.q); err != nil {
						b.Fatal(err)
					}
				}
				// The process's CPU time per query: on a shared machine the
				// wall time also holds the time other processes ran.
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime returns the CPU time the process used so far, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
