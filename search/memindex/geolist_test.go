package memindex

import (
	"fmt"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// nearIndex returns an index of events over weeks weeks from t0 (a
// week's start) at 20 points on a line of latitude 48 to 48.19 (about
// 1.1 km apart), the i-th event at point i%20, one in ten featured; its
// documents and t0.
func nearIndex() (*Index, []search.EventDocument, int64) {
	const t0 = 1_800_086_400 - 1_800_086_400%week
	docs := make([]search.EventDocument, events)
	for i := range docs {
		j := i / weeks
		start := int64(t0 + (i%weeks)*week + j)
		docs[i] = search.EventDocument{
			ID: int64(i + 1), Status: "publish", Start: start, End: start + 3600, Featured: j%10 == 0,
			CategoryIDs: []int64{int64(i % 3)}, HasGeo: true, Geo: &search.GeoPoint{Lat: 48 + float64(i%20)*0.01, Lng: 2},
		}
	}
	x := New()
	x.Apply(docs)
	return x, docs, t0
}

// TestNearWorkDoesNotGrowWithMatches counts the date order's entries,
// points and documents a radius list reads (listSteps), not its time: over the same weeks, the first page and exact total of a circle
// holding ten points (ten times the events) cost about what those of a
// circle holding one point cost, and far fewer steps than the matches; a
// window that cuts weeks adds at most the documents of the two weeks it
// cuts. The old list read every entry inside the dates.
func TestNearWorkDoesNotGrowWithMatches(t *testing.T) {
	t.Parallel()
	x, docs, t0 := nearIndex()
	circle := func(lat, km float64) search.Opt[search.GeoCircle] {
		return search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: lat, Lng: 2}, RadiusKm: km})
	}
	one, ten := circle(48, 0.5), circle(48.045, 5.5) // points 0, and 0 to 9
	from, to := t0+5*week, t0+45*week
	cutFrom, cutTo := from+3*86400, to+2*86400 // cuts weeks 5 and 45
	perWeek := events / weeks
	for _, c := range []struct {
		name     string
		from, to int64
		featured bool
		page     [2]int
		edges    bool
	}{
		{"weeks 5 to 45", from, to, false, [2]int{0, 10}, false},
		{"weeks 5 to 45, page 3", from, to, false, [2]int{20, 10}, false},
		{"weeks 5 to 45, featured", from, to, true, [2]int{0, 10}, false},
		{"weeks 5 to 45, the total only", from, to, false, [2]int{0, 0}, false},
		{"cut weeks", cutFrom, cutTo, false, [2]int{0, 10}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var totals []int
			var steps []uint64
			for _, near := range []search.Opt[search.GeoCircle]{one, ten} {
				q := search.EventQuery{StartGTE: search.Some(c.from), StartLT: search.Some(c.to), Near: near,
					Offset: c.page[0], Limit: c.page[1]}
				if c.featured {
					q.Featured = search.Some(true)
				}
				before := listSteps(x)
				got, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				steps = append(steps, listSteps(x)-before)
				want := searchtest.ExpectedEvents(docs, q)
				if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
					t.Fatalf("%+v: total %d, page %v; want %d, %v", q, got.Total, got.IDs, want.Total, want.IDs)
				}
				totals = append(totals, got.Total)
			}
			if totals[1] < 9*totals[0] {
				t.Fatalf("%d matches, then %d: the case does not grow the matches ten times", totals[0], totals[1])
			}
			slack := uint64(perWeek / 4)
			if c.edges {
				slack += uint64(2 * perWeek)
			}
			if steps[1] > steps[0]+slack || steps[1]*4 > uint64(totals[1]) {
				t.Errorf("%d matches: %d steps; %d matches: %d steps (allowed: %d, and under a quarter of the matches)",
					totals[0], steps[0], totals[1], steps[1], steps[0]+slack)
			}
			t.Logf("%d matches: %d steps; %d matches: %d steps", totals[0], steps[0], totals[1], steps[1])
		})
	}
}

// TestNearListAgreesWithReference checks the radius lists of nearIndex
// (every event at a point) against the reference: circles holding every
// point, ten and one, over windows whose bounds fall on events' starts
// and ends, inside weeks and at their edges, with pages before, across
// and after the end of the matches, featured or not, the first pages
// with facets; so that every way nearCounted reads a week (the date
// order up to the page or whole, the points' documents) and every way
// the facet buckets count a radius (a week whose documents are all
// inside counted whole, the points' postings) is taken.
func TestNearListAgreesWithReference(t *testing.T) {
	t.Parallel()
	x, docs, t0 := nearIndex()
	circles := []search.GeoCircle{
		{Center: search.GeoPoint{Lat: 48.095, Lng: 2}, RadiusKm: 30}, // every point
		{Center: search.GeoPoint{Lat: 48.045, Lng: 2}, RadiusKm: 5.5},
		{Center: search.GeoPoint{Lat: 48.19, Lng: 2}, RadiusKm: 0.5},
	}
	some := search.Some[int64]
	var none search.Opt[int64]
	at := func(w, j int64) int64 { return t0 + w*week + j } // the start of the j-th event of week w
	windows := []struct{ gte, lt, endLTE, endGT search.Opt[int64] }{
		{none, none, none, none},
		{some(at(3, 0)), some(at(9, 0)), none, none},
		{some(at(3, 1)), some(at(9, 399)), none, none},
		{some(at(3, 399)), some(at(4, 1)), none, none},
		{some(at(10, 200)), none, some(at(12, 3600+7)), none},
		{none, none, none, some(at(40, 3600+150))},
		{some(at(7, 5)), some(at(7, 6)), none, none},
	}
	n := 0
	for _, c := range circles {
		for _, w := range windows {
			for _, page := range [][2]int{{0, 10}, {0, 400}, {5, 3}, {395, 10}, {3000, 10}, {0, 0}} {
				for _, featured := range []search.Opt[bool]{{}, search.Some(true)} {
					q := search.EventQuery{Near: search.Some(c), StartGTE: w.gte, StartLT: w.lt, EndLTE: w.endLTE, EndGT: w.endGT,
						Featured: featured, Offset: page[0], Limit: page[1]}
					if page[0] == 0 {
						q.Facets = []string{search.FacetFeatured, search.FacetCategories}
					}
					got, err := x.Search(t.Context(), q)
					if err != nil {
						t.Fatal(err)
					}
					want := searchtest.ExpectedEvents(docs, q)
					if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
						t.Fatalf("%+v: total %d, page %v; want %d, %v", q, got.Total, got.IDs, want.Total, want.IDs)
					}
					if wantF := searchtest.ExpectedFacets(docs, q); fmt.Sprint(got.Facets) != fmt.Sprint(wantF) {
						t.Fatalf("%+v: facets\n got %v\nwant %v", q, got.Facets, wantF)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d queries agree", n)
}

// TestNearCheaperAtItsBoundary builds indexes whose one week holds 20
// points and just fewer, as many, and just more events than the steps
// of nearCounted cost (20 × nearStepCost entries), and runs radius lists
// (pages, a deep page, the total only, anonymous) in each: plan.each
// must answer them while the steps cost as much as the entries or more
// (Index.nearDeclined counts it), nearCounted once they cost less, and
// both ways, and nearCounted taken always (nearStepCost 0), must give
// the reference's pages and totals.
func TestNearCheaperAtItsBoundary(t *testing.T) {
	const points = 20
	now := int64(1_800_000_000)
	facetWidth := defaultKnobs.facetWidth                 // New's indexes'
	week := (defaultKnobs.bucketOf(now) + 1) * facetWidth // the start of a bucket
	for _, c := range []struct {
		name     string
		events   int
		declined bool
	}{
		{"just under", points*nearStepCost - 1, true},
		{"at", points * nearStepCost, true},
		{"just over", points*nearStepCost + 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs := make([]search.EventDocument, c.events)
			for i := range docs {
				status := "publish"
				if i%7 == 3 {
					status = "draft"
				}
				start := week + int64(i)*600
				docs[i] = search.EventDocument{ID: int64(i + 1), Status: status, Start: start, End: start + 3600, PublishDate: now,
					HasGeo: true, Geo: &search.GeoPoint{Lat: 48 + float64(i%points)*0.05, Lng: 2},
					Text: map[string]search.Text{"en": {Title: fmt.Sprintf("event %d", i)}}}
			}
			x := New()
			x.Apply(docs)
			ref := searchtest.NewReference(docs)
			near := search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: 48, Lng: 2}, RadiusKm: 30})
			queries := map[string]search.EventQuery{
				"first page":     {Lang: "en", Near: near, StartGTE: search.Some(now), Limit: 8},
				"deep page":      {Lang: "en", Near: near, StartGTE: search.Some(now), Offset: 20, Limit: 8},
				"total only":     {Lang: "en", Near: near, StartGTE: search.Some(now)},
				"anonymous":      {Lang: "en", Near: near, Statuses: []string{"publish"}, ExcludeHidden: true, ExcludeProtected: true, Limit: 8},
				"the week's end": {Lang: "en", Near: near, StartGTE: search.Some(week), EndLTE: search.Some(week + facetWidth), Limit: 8},
			}
			for name, q := range queries {
				for _, cost := range []int{nearStepCost, 0} {
					func() {
						defer func(c int) { nearStepCost = c }(nearStepCost)
						nearStepCost = cost
						before := x.nearDeclined.Load()
						checkAgainstReference(t, x, ref, q, fmt.Sprintf("%s, nearStepCost %d", name, cost))
						declined := x.nearDeclined.Load() != before
						if want := c.declined && cost != 0; declined != want {
							t.Errorf("%s, nearStepCost %d: %d events, %d points: plan.each taken %v, want %v", name, cost, c.events, points, declined, want)
						}
					}()
				}
			}
		})
	}
}
