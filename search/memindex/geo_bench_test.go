package memindex

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/calendar/eventcal/search"
)

// BenchmarkGeo measures radius lists over 100,000 and 1,000,000 events
// of the load benchmark's shape (or the sizes in MEMINDEX_BENCH_SIZES):
// a 50 km circle holding nearly every venue, a 10 km one, and the 50 km
// list with the usual filters: go test ./search/memindex -run XXX -bench
// Geo.
func BenchmarkGeo(b *testing.B) {
	for _, n := range textSizes(b) {
		x, now := benchIndex(n)
		near := func(lat, lng, km float64) func(q *search.EventQuery) {
			return func(q *search.EventQuery) {
				q.Near = search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: lat, Lng: lng}, RadiusKm: km})
			}
		}
		w := func(fs ...func(q *search.EventQuery)) search.EventQuery {
			return with(now, func(q *search.EventQuery) {
				for _, f := range fs {
					f(q)
				}
			})
		}
		qs := []benchQuery{
			{"geo 50km", w(near(48.5, 2.5, 50))},
			{"geo 10km", w(near(48.9, 2.4, 10))},
			{"geo 50km, page 3", w(near(48.5, 2.5, 50), func(q *search.EventQuery) { q.Offset = 16 })},
			{"geo 50km, next month featured", w(near(48.5, 2.5, 50), func(q *search.EventQuery) {
				q.StartGTE, q.EndLTE = search.Some(now+30*86400), search.Some(now+61*86400)
				q.Featured = search.Some(true)
			})},
			{"geo 50km, category", w(near(48.5, 2.5, 50), func(q *search.EventQuery) { q.CategoryIDs = []int64{7} })},
			{"geo 50km, facets", w(near(48.5, 2.5, 50), func(q *search.EventQuery) {
				q.Facets = []string{search.FacetCategories, search.FacetVenue}
			})},
		}
		runQueries(b, x, fmt.Sprintf("%d/", n), qs)
		x = nil
		runtime.GC()
	}
}
