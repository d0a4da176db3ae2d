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

// smallSizes returns the index sizes of BenchmarkSmallSearch: 3,000 and
// 10,000 events (the load benchmark's default size and the next), or the
// comma-separated sizes in MEMINDEX_SMALL_SIZES.
func smallSizes(b *testing.B) []int {
	v := os.Getenv("MEMINDEX_SMALL_SIZES")
	if v == "" {
		return []int{3000, 10000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("MEMINDEX_SMALL_SIZES: %q is not a size", f)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkSmallSearch measures BenchmarkSearch's list rows and a text
// search of each of the load benchmark's words at the small sizes the
// load benchmark runs by default (its search= row picks one of those
// words per request). With MEMINDEX_SMALL_WRITES set, one small write
// precedes each query, so that nothing a query keeps for the next
// survives; MEMINDEX_NEAR_STEP_COST sets nearStepCost (0: every radius
// by nearCounted). It compiles, without the latter, against the engine before the text pages
// (1d520b0), to compare the two: go test ./search/memindex -run '^$'
// -bench SmallSearch -cpu 1.
func BenchmarkSmallSearch(b *testing.B) {
	writes := os.Getenv("MEMINDEX_SMALL_WRITES") != ""
	if v, err := strconv.Atoi(os.Getenv("MEMINDEX_NEAR_STEP_COST")); err == nil {
		// The radius's choice of path (nearCheaper), to measure each.
		defer func(c int) { nearStepCost = c }(nearStepCost)
		nearStepCost = v
	}
	for _, n := range smallSizes(b) {
		x, now := benchIndex(n)
		qs := listQueries(now)
		qs = append(qs, benchQuery{"search, every word", with(now, func(*search.EventQuery) {})})
		for _, c := range qs {
			b.Run(fmt.Sprintf("%d/%s", n, c.name), func(b *testing.B) {
				cpu0 := smallCPUTime()
				for i := 0; b.Loop(); i++ {
					if writes {
						x.Apply([]search.EventDocument{{ID: int64(9_000_000 + i%100), Status: "publish", Start: now + int64(i), End: now + int64(i) + 60,
							Text: map[string]search.Text{"en": {Title: fmt.Sprintf("bench write %d", i)}}}})
					}
					q := c.q
					if c.name == "search, every word" {
						q.Query = benchWords[i%len(benchWords)]
					}
					if _, err := x.Search(b.Context(), q); err != nil {
						b.Fatal(err)
					}
				}
				// The process's CPU time per query: on a shared machine
				// the wall time also holds the time others ran.
				b.ReportMetric(float64(smallCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// smallCPUTime returns the process's user and system CPU time in
// nanoseconds (facets_bench_test.go's cpuTime, which the engine of
// 1d520b0 lacks).
func smallCPUTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
