package meili

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestOneSearchPerList counts the search requests the engine sends for
// each kind of list, against the fake's emulation on generated data: one
// search per list, asking for a page of the requested size only
// (page/hitsPerPage, never offset/limit, so that Meilisearch counts
// totalHits exhaustively), whatever the number of matches. A Near list
// sends one more, bounded request first: the points within millimetres of
// the circle's edge (edgeRing), one page of at most maxTotalHits, id and
// _geo only. A multi-word place search is one federated multi-search
// (searchOneField) whose federation asks for the page itself. The text
// searches are in the default language, whose text is the base text
// (documents.go); a search in another language is two (TestPairRequests).
func TestOneSearchPerList(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	f.Emulate = true
	e, err := Open(t.Context(), f.srv.URL, "", Options{TaskPollInterval: time.Millisecond, Languages: []string{"en"}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	fx := searchtest.Generate(20260101, 1500, 150, 20)
	if err := e.Init(t.Context()); err != nil {
		t.Fatalf("Init: %v", err)
	}
	if err := e.IndexEvents(t.Context(), fx.Events); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}
	if err := e.IndexPlaces(t.Context(), fx.Places()); err != nil {
		t.Fatalf("IndexPlaces: %v", err)
	}
	paris := fx.Cities[1]
	venueWord := search.Words(fx.Venues[0].Text["en"].Title)[0]

	const eventsPath, venuesPath = "/indexes/calendar_events/search", "/indexes/calendar_venues/search"
	type list struct {
		name   string
		events *search.EventQuery
		places *search.PlaceQuery
		// ring: a Near list, whose first request is the edge ring.
		ring bool
		// federated: the one request is a federated multi-search (one
		// query per attribute) whose federation asks for the page.
		federated bool
		// anyOrder: the contract lets the engines order ties differently.
		anyOrder bool
	}
	ev := func(mod func(q *search.EventQuery)) *search.EventQuery {
		q := search.EventQuery{Lang: "en", Statuses: []string{"publish"}}
		mod(&q)
		return &q
	}
	lists := []list{
		{name: "default", events: ev(func(q *search.EventQuery) { q.EndGT = search.Some(fx.Now) })},
		{name: "filtered (dates, category, featured)", events: ev(func(q *search.EventQuery) {
			q.StartGTE, q.EndLTE = search.Some(fx.Now-200*86400), search.Some(fx.Now+300*86400)
			q.CategoryIDs, q.Featured = []int64{1, 2, 3}, search.Some(false)
		})},
		{name: "text search", events: ev(func(q *search.EventQuery) { q.Query = "jazz" })},
		{name: "geo radius", events: ev(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: paris, RadiusKm: 40})
		}), ring: true},
		{name: "geo radius and text", events: ev(func(q *search.EventQuery) {
			q.Query, q.Near = "concert", search.Some(search.GeoCircle{Center: paris, RadiusKm: 50})
		}), ring: true},
		{name: "facets", events: ev(func(q *search.EventQuery) {
			q.Facets = []string{search.FacetCategories, search.FacetTags, search.FacetFeatured, search.FacetVenue}
		})},
		{name: "relevance", events: ev(func(q *search.EventQuery) { q.Query, q.Relevance = "music", true }), anyOrder: true},
		{name: "by publish date", events: ev(func(q *search.EventQuery) { q.Sort = search.ByPublishDate })},
		{name: "places", places: &search.PlaceQuery{Kind: search.Venues, Lang: "en"}},
		{name: "places search", places: &search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: venueWord}},
		{name: "places search, several words", places: &search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: "a e"}, federated: true},
	}
	pages := []struct{ offset, limit int }{{0, 5}, {10, 5}, {20, 10}}
	for _, l := range lists {
		for _, pg := range pages {
			t.Run(fmt.Sprintf("%s/offset %d limit %d", l.name, pg.offset, pg.limit), func(t *testing.T) {
				f.Reset()
				var got search.Result
				var want search.Result
				path := eventsPath
				if l.events != nil {
					q := *l.events
					q.Offset, q.Limit = pg.offset, pg.limit
					got, err = e.SearchEvents(t.Context(), q)
					want = searchtest.ExpectedEvents(fx.Events, q)
				} else {
					q := *l.places
					q.Offset, q.Limit = pg.offset, pg.limit
					got, err = e.SearchPlaces(t.Context(), q)
					want = searchtest.ExpectedPlaces(fx.Places(), q)
					path = venuesPath
				}
				if err != nil {
					t.Fatalf("search: %v", err)
				}
				if want.Total <= pg.offset+pg.limit && !l.federated {
					t.Fatalf("the generated data gives %d matches: want more than one page", want.Total)
				}
				if got.Total != want.Total || !l.anyOrder && !slices.Equal(got.IDs, want.IDs) || len(got.IDs) != len(want.IDs) {
					t.Errorf("result %v (total %d), want %v (total %d)", got.IDs, got.Total, want.IDs, want.Total)
				}

				reqs := append(f.Calls(http.MethodPost, "/indexes/*"), f.Calls(http.MethodPost, "/multi-search")...)
				if l.federated {
					path = "/multi-search"
				}
				wantN := 1
				if l.ring {
					wantN = 2
				}
				if len(reqs) != wantN {
					t.Fatalf("%d search requests, want %d: %v", len(reqs), wantN, reqs)
				}
				for _, r := range reqs {
					if r.Path != path {
						t.Errorf("request to %s, want %s", r.Path, path)
					}
				}
				bodies := make([]map[string]any, len(reqs))
				for i, r := range reqs {
					bodies[i] = r.Body.(map[string]any)
					if _, ok := bodies[i]["limit"]; ok {
						t.Errorf("request %d sends limit (an estimated total): %s", i, meilisim.JSONString(bodies[i]))
					}
					if _, ok := bodies[i]["offset"]; ok {
						t.Errorf("request %d sends offset (an estimated total): %s", i, meilisim.JSONString(bodies[i]))
					}
				}
				main := bodies[len(bodies)-1]
				if l.ring {
					ring := bodies[0]
					c := l.events.Near.Value
					inner, outer := edgeRing(c.RadiusM())
					if outer-inner > 0.005 {
						t.Errorf("edge ring %v m to %v m: want millimetres", inner, outer)
					}
					wantFilter := geoRadius(c.Center, outer) + " AND " + not(geoRadius(c.Center, inner))
					if s, _ := ring["filter"].(string); !strings.HasSuffix(s, wantFilter) {
						t.Errorf("ring filter %q, want it to end with %q", s, wantFilter)
					}
					if ring["hitsPerPage"] != float64(maxTotalHits) || ring["page"] != float64(1) ||
						!reflect.DeepEqual(ring["attributesToRetrieve"], []any{"key", "_geo"}) || ring["sort"] != nil || ring["facets"] != nil {
						t.Errorf("ring request %s: want one bounded page of key and _geo, unsorted, no facets", meilisim.JSONString(ring))
					}
					if !strings.Contains(main["filter"].(string), geoRadius(c.Center, inner)) {
						t.Errorf("list filter %q: want the inner circle to Meilisearch", main["filter"])
					}
				}
				if l.federated {
					fed, _ := main["federation"].(map[string]any)
					if fed["limit"] != float64(pg.limit) || pg.offset > 0 && fed["offset"] != float64(pg.offset) {
						t.Errorf("request %s: want the federation to ask for offset %d limit %d", meilisim.JSONString(main), pg.offset, pg.limit)
					}
					for _, q := range main["queries"].([]any) {
						for _, k := range []string{"page", "hitsPerPage", "limit", "offset"} {
							if _, ok := q.(map[string]any)[k]; ok {
								t.Errorf("query sends %s: %s", k, meilisim.JSONString(q))
							}
						}
					}
					return
				}
				wantPage := float64(pg.offset/pg.limit + 1)
				if main["hitsPerPage"] != float64(pg.limit) || main["page"] != wantPage {
					t.Errorf("list request asks page %v of %v hits, want page %v of %d: %s",
						main["page"], main["hitsPerPage"], wantPage, pg.limit, meilisim.JSONString(main))
				}
			})
		}
	}
}
