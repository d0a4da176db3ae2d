package embedded

import (
	"context"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// BenchmarkTypeahead indexes 10,000 generated events and runs what a search
// box sends while typing (growing prefixes, then one-typo words) and a
// facet count, each as the default list (published, two-year window, first
// page of 8). Every answer is checked against the reference.
func BenchmarkTypeahead(b *testing.B) {
	e, f := benchEngine(b)
	ctx := context.Background()
	window := search.EventQuery{
		Lang: "en", Statuses: []string{"publish"}, StartGTE: search.Some(f.Now), EndLTE: search.Some(f.Now + 2*365*86400 - 1),
		ExcludeHidden: true, ExcludeProtected: true, Limit: 8,
	}
	var queries []search.EventQuery
	for _, typed := range []string{"j", "ja", "jaz", "jazz", "jazz c", "jazz co", "jazz con", "jazz conc", "jazz concert",
		"jazz cnocert ", "festivla ", "nightclbu ", "exhibitoin", "summre nigth"} {
		q := window
		q.Query = typed
		queries = append(queries, q)
	}
	check := func(b *testing.B, q search.EventQuery) {
		got, err := e.SearchEvents(ctx, q)
		if want := searchtest.ExpectedEvents(f.Events, q); err != nil || got.Total != want.Total {
			b.Fatalf("%q: got %+v, %v; want total %d", q.Query, got, err, want.Total)
		}
	}
	b.Run("typeahead", func(b *testing.B) {
		for _, q := range queries {
			check(b, q)
		}
		i := 0
		for b.Loop() {
			if _, err := e.SearchEvents(ctx, queries[i%len(queries)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	relevance := slices.Clone(queries)
	for i := range relevance {
		relevance[i].Relevance = true
	}
	b.Run("typeahead by relevance", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := e.SearchEvents(ctx, relevance[i%len(relevance)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	facets := window
	facets.Facets = []string{search.FacetCategories, search.FacetVenue}
	b.Run("facets categories,venue", func(b *testing.B) {
		check(b, facets)
		for b.Loop() {
			if _, err := e.SearchEvents(ctx, facets); err != nil {
				b.Fatal(err)
			}
		}
	})
}
