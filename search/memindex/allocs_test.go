package memindex

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestQueryAllocations bounds what a query allocates, in objects
// (testing.AllocsPerRun) and in bytes, on an index of 4,000 events of
// which 400 weekly series (about 45,000 documents): the scratch a query
// needs over every slot or every series (a bit set of the candidates,
// the series' first hits, the hits' first and last starts) comes from
// pools (scratch.go), so no query allocates anything that grows with the
// index, and the garbage collector, which has the whole index to mark at
// every cycle, runs less often. The bounds are about twice what the
// queries allocated when written (1.3, 3.6, 9.7 and 1.3 KB), and a bit
// set over the slots is 5.6 KB here: one made per query (as before the
// pools) exceeds the byte bound of the rows that read one, and a
// bucket's matches made per query (the collapsed list's) the bound of
// the collapsed list. A one-value list filter reads the value's bitmap
// itself: a copy of it (5.8 KB a query here, as before) exceeds the
// bound of the "one category" row. The search row allocated 3.6 KB in
// most runs of the test and 6.6 KB in about one of ten, in the same
// process (not understood yet; a collection is not the cause: there is
// none while measuring): its bound is 8 KB, which a bit set made per
// query (9.2–9.7 KB) still exceeds.
func TestQueryAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 45,000 documents")
	}
	if raceEnabled {
		t.Skip("the race detector allocates for itself: the bounds are for the plain build (go test ./... runs it)")
	}
	x, now := benchIndexThisWeek(4000, 400)
	w := func(f func(q *search.EventQuery)) search.EventQuery { return with(now, f) }
	setBytes := float64((len(x.rows) + 63) / 64 * 8)
	for _, c := range []struct {
		name       string
		q          search.EventQuery
		allocs, kb float64
	}{
		{"default list", w(func(*search.EventQuery) {}), 40, 4},
		{"search", w(func(q *search.EventQuery) { q.Query = "jazz" }), 60, 8},
		{"collapsed search", w(func(q *search.EventQuery) { q.Query = "jazz"; q.CollapseSeries = true }), 100, 14},
		{"collapsed", w(func(q *search.EventQuery) { q.CollapseSeries = true }), 40, 4},
		{"one category", w(func(q *search.EventQuery) { q.CategoryIDs = []int64{7} }), 40, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func() {
				if _, err := x.Search(t.Context(), c.q); err != nil {
					t.Fatal(err)
				}
			}
			// No collection while measuring: one empties the pools, and
			// on a busy machine (CI) collections came often enough to
			// add a bit set to most batches.
			runtime.GC()
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			run()
			allocs := testing.AllocsPerRun(100, run)
			// The bytes, the least of ten batches: the count is the
			// process's, so another test's goroutines only add to a
			// batch.
			kb := math.Inf(1)
			for range 10 {
				var before, after runtime.MemStats
				const runs = 20
				runtime.ReadMemStats(&before)
				for range runs {
					run()
				}
				runtime.ReadMemStats(&after)
				kb = min(kb, float64(after.TotalAlloc-before.TotalAlloc)/runs/1024)
			}
			t.Logf("%.0f allocations, %.1f KB a query (a bit set over the slots: %.1f KB)", allocs, kb, setBytes/1024)
			if allocs > c.allocs {
				t.Errorf("%.0f allocations a query, want at most %.0f", allocs, c.allocs)
			}
			if kb > c.kb {
				t.Errorf("%.1f KB a query, want at most %.1f", kb, c.kb)
			}
		})
	}
}
