package meili

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// The contract tests check, against fakeMeili, exactly what the engine
// sends to Meilisearch and how it reads the answers. They need no server.

var testLangs = []string{"en", "nl"}

// eventAttrs are the searchable attributes of the event indexes with the
// test languages: the base text (documents.go), then each language's.
var eventAttrs = []any{"title__base", "description__base", "excerpt__base", "title_en", "description_en", "excerpt_en", "title_nl", "description_nl", "excerpt_nl"}

// baseOn is the attributesToSearchOn of a search in the base language.
var baseOn = []any{"title__base", "description__base", "excerpt__base"}

func TestSearchEventsRequest(t *testing.T) {
	t.Parallel()
	const filter = "filter"
	tests := []struct {
		name string
		q    search.EventQuery
		// want holds the body keys that differ from the base request
		// (a nil value deletes the key).
		want map[string]any
	}{
		{"no filter", search.EventQuery{}, nil},
		{"empty lists do not filter", search.EventQuery{Statuses: []string{}, IDs: []int64{}, CategoryIDs: []int64{}, TagIDs: []int64{}, VenueIDs: []int64{}, OrganizerIDs: []int64{}}, nil},
		{"statuses", search.EventQuery{Statuses: []string{"draft", "private"}}, map[string]any{filter: `status IN ["draft", "private"]`}},
		{"status with quotes", search.EventQuery{Statuses: []string{`we"ird\`}}, map[string]any{filter: `status IN ["we\"ird\\"]`}},
		{"start >=", search.EventQuery{StartGTE: search.Some[int64](1735689600)}, map[string]any{filter: `start >= 1735689600`}},
		{"start >", search.EventQuery{StartGT: search.Some[int64](100)}, map[string]any{filter: `start > 100`}},
		{"start <", search.EventQuery{StartLT: search.Some[int64](-5)}, map[string]any{filter: `start < -5`}},
		{"end <=", search.EventQuery{EndLTE: search.Some[int64](200)}, map[string]any{filter: `end <= 200`}},
		{"end <", search.EventQuery{EndLT: search.Some[int64](0)}, map[string]any{filter: `end < 0`}},
		{"end >", search.EventQuery{EndGT: search.Some[int64](300)}, map[string]any{filter: `end > 300`}},
		{"ids", search.EventQuery{IDs: []int64{42, 7}}, map[string]any{filter: `id IN [42, 7]`}},
		{"categories", search.EventQuery{CategoryIDs: []int64{1, 2}}, map[string]any{filter: `category_ids IN [1, 2]`}},
		{"tags", search.EventQuery{TagIDs: []int64{11}}, map[string]any{filter: `tag_ids IN [11]`}},
		{"venues", search.EventQuery{VenueIDs: []int64{5, 6}}, map[string]any{filter: `venue_ids IN [5, 6]`}},
		{"organizers", search.EventQuery{OrganizerIDs: []int64{9}}, map[string]any{filter: `organizer_ids IN [9]`}},
		{"featured", search.EventQuery{Featured: search.Some(true)}, map[string]any{filter: `featured = true`}},
		{"not featured", search.EventQuery{Featured: search.Some(false)}, map[string]any{filter: `featured = false`}},
		{"ticketed", search.EventQuery{Ticketed: search.Some(true)}, map[string]any{filter: `ticketed = true`}},
		{"not ticketed", search.EventQuery{Ticketed: search.Some(false)}, map[string]any{filter: `ticketed = false`}},
		{"has geo", search.EventQuery{HasGeo: search.Some(true)}, map[string]any{filter: `has_geo = true`}},
		{"has no geo", search.EventQuery{HasGeo: search.Some(false)}, map[string]any{filter: `has_geo = false`}},
		{"parent", search.EventQuery{ParentID: search.Some[int64](77)}, map[string]any{filter: `parent_id = 77`}},
		{"parent zero", search.EventQuery{ParentID: search.Some[int64](0)}, map[string]any{filter: `parent_id = 0`}},
		{"exclude hidden", search.EventQuery{ExcludeHidden: true}, map[string]any{filter: `hide_from_listings = false`}},
		{"exclude protected", search.EventQuery{ExcludeProtected: true}, map[string]any{filter: `has_password = false`}},
		{"start window", search.EventQuery{StartGTE: search.Some[int64](10), StartLT: search.Some[int64](20)},
			map[string]any{filter: `start >= 10 AND start < 20`}},
		{"typical list", search.EventQuery{
			Statuses: []string{"publish"}, StartGTE: search.Some[int64](1000), EndLTE: search.Some[int64](2000),
			CategoryIDs: []int64{3}, Featured: search.Some(false), ExcludeHidden: true,
		}, map[string]any{filter: `status IN ["publish"] AND start >= 1000 AND end <= 2000 AND category_ids IN [3] AND featured = false AND hide_from_listings = false`}},
		{"every filter", search.EventQuery{
			Statuses: []string{"draft", "future"}, StartGTE: search.Some[int64](1), StartGT: search.Some[int64](2), StartLT: search.Some[int64](3),
			EndLTE: search.Some[int64](4), EndLT: search.Some[int64](5), EndGT: search.Some[int64](6),
			IDs: []int64{7}, CategoryIDs: []int64{8}, TagIDs: []int64{9}, VenueIDs: []int64{10}, OrganizerIDs: []int64{11},
			Featured: search.Some(true), Ticketed: search.Some(false), HasGeo: search.Some(true), ParentID: search.Some[int64](12),
			EventStatuses: []string{"canceled", "postponed"}, ExcludeHidden: true, ExcludeProtected: true,
		}, map[string]any{filter: `status IN ["draft", "future"] AND start >= 1 AND start > 2 AND start < 3 AND end <= 4 AND end < 5 AND end > 6 AND id IN [7] AND category_ids IN [8] AND tag_ids IN [9] AND venue_ids IN [10] AND organizer_ids IN [11] AND featured = true AND ticketed = false AND has_geo = true AND parent_id = 12 AND event_status IN ["canceled", "postponed"] AND hide_from_listings = false AND has_password = false`}},
		{"by publish date", search.EventQuery{Sort: search.ByPublishDate}, map[string]any{"sort": []any{"publish_date:asc", "id:asc", "occurrence:asc"}}},
		// Each series once: distinct on the series id.
		{"collapse series", search.EventQuery{CollapseSeries: true}, map[string]any{"distinct": "id"}},
		// The last word is a prefix unless a separator follows it: the
		// request ends with a space then.
		{"text", search.EventQuery{Query: "Jazz,  NIGHT!"}, map[string]any{
			"q": `jazz night `, "attributesToSearchOn": baseOn, "matchingStrategy": "all"}},
		{"text as typed", search.EventQuery{Query: "Jazz nig"}, map[string]any{
			"q": `jazz nig`, "attributesToSearchOn": baseOn, "matchingStrategy": "all"}},
		// A hyphenated word is sent as its parts, and a lone or leading
		// '-' not at all (Meilisearch would read "-word" as a negation).
		{"text hyphenated and accented", search.EventQuery{Query: "open-air ÉÉN -"}, map[string]any{
			"q": `open air een `, "attributesToSearchOn": baseOn, "matchingStrategy": "all"}},
		{"text leading hyphen", search.EventQuery{Query: "jazz -night"}, map[string]any{
			"q": `jazz night`, "attributesToSearchOn": baseOn, "matchingStrategy": "all"}},
		// Only the first ten distinct words are sent.
		{"text over the word limit", search.EventQuery{Query: "a b a c d e f g h i j k l"}, map[string]any{
			"q": `a b c d e f g h i j `, "attributesToSearchOn": baseOn, "matchingStrategy": "all"}},
		{"relevance", search.EventQuery{Query: "jazz", Relevance: true}, map[string]any{
			"q": `jazz`, "attributesToSearchOn": baseOn, "matchingStrategy": "all", "sort": nil}},
		{"relevance without words keeps the date order", search.EventQuery{Relevance: true}, nil},
		{"facets", search.EventQuery{Facets: search.EventFacets}, map[string]any{
			"facets": []any{"category_ids", "tag_ids", "venue_ids", "organizer_ids", "featured", "ticketed"}}},
		{"text only punctuation is no text", search.EventQuery{Query: " !? ... "}, nil},
		{"text with filters", search.EventQuery{Query: "jazz", Statuses: []string{"publish"}, Featured: search.Some(true)}, map[string]any{
			"q": `jazz`, "attributesToSearchOn": baseOn, "matchingStrategy": "all",
			filter: `status IN ["publish"] AND featured = true`}},
		{"second page", search.EventQuery{Offset: 10, Limit: 10}, map[string]any{"page": 2}},
		{"unaligned page", search.EventQuery{Offset: 3, Limit: 5}, map[string]any{"page": 1, "hitsPerPage": 8}},
		{"total only", search.EventQuery{Limit: 0}, map[string]any{"hitsPerPage": 0}},
		{"total only with offset", search.EventQuery{Offset: 5, Limit: 0}, map[string]any{"hitsPerPage": 0}},
	}
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs})
	f.AddIndex("calendar_events", nil)
	f.AddIndex("calendar_events_hidden", nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Reset()
			q := tt.q
			if q.Lang == "" {
				q.Lang = "en"
			}
			// One index per request here: a query without statuses is
			// asked for published events (searches of both indexes:
			// TestSearchBothEventIndexes).
			path := "/indexes/calendar_events/search"
			wantFilter, _ := tt.want[filter].(string)
			if len(q.Statuses) == 0 {
				q.Statuses = []string{"publish"}
				wantFilter = and(`status IN ["publish"]`, wantFilter)
			} else if !slices.Contains(q.Statuses, "publish") {
				path = "/indexes/calendar_events_hidden/search"
			}
			if q.Limit == 0 && tt.name != "total only" && tt.name != "total only with offset" {
				q.Limit = 10
			}
			if _, err := e.SearchEvents(t.Context(), q); err != nil {
				t.Fatalf("SearchEvents: %v", err)
			}
			over := map[string]any{"attributesToRetrieve": []any{"id", "occurrence"}}
			maps.Copy(over, tt.want)
			want := searchBody([]any{"start:asc", "id:asc", "occurrence:asc"}, over)
			want[filter] = wantFilter
			checkSearches(t, f, path, want)
		})
	}
}

func TestSearchPlacesRequest(t *testing.T) {
	t.Parallel()
	const filter = "filter"
	venueAttrs := []any{"title_en", "description_en", "excerpt_en",
		"field_address", "field_city", "field_province", "field_state", "field_stateprovince", "field_zip", "field_phone"}
	organizerAttrs := []any{"title_en", "description_en", "excerpt_en", "field_phone", "field_email", "field_website"}
	tests := []struct {
		name  string
		q     search.PlaceQuery
		index string
		want  map[string]any
	}{
		{"all venues", search.PlaceQuery{Kind: search.Venues}, "calendar_venues", nil},
		{"all organizers", search.PlaceQuery{Kind: search.Organizers}, "calendar_organizers", nil},
		{"statuses", search.PlaceQuery{Kind: search.Venues, Statuses: []string{"publish", "draft"}}, "calendar_venues",
			map[string]any{filter: `status IN ["publish", "draft"]`}},
		{"ids", search.PlaceQuery{Kind: search.Organizers, IDs: []int64{-1}}, "calendar_organizers", map[string]any{filter: `id IN [-1]`}},
		{"has events", search.PlaceQuery{Kind: search.Venues, HasEvents: search.Some(true)}, "calendar_venues", map[string]any{filter: `has_events = true`}},
		{"has no events", search.PlaceQuery{Kind: search.Venues, HasEvents: search.Some(false)}, "calendar_venues", map[string]any{filter: `has_events = false`}},
		{"upcoming one status", search.PlaceQuery{Kind: search.Venues, UpcomingAfter: search.Some[int64](1735689600), UpcomingStatuses: []string{"publish"}},
			"calendar_venues", map[string]any{filter: `last_start_publish >= 1735689600`}},
		{"upcoming statuses", search.PlaceQuery{Kind: search.Venues, UpcomingAfter: search.Some[int64](100), UpcomingStatuses: []string{"publish", "private", "publish", "unknown"}},
			"calendar_venues", map[string]any{filter: `(last_start_publish >= 100 OR last_start_private >= 100)`}},
		{"upcoming at zero", search.PlaceQuery{Kind: search.Venues, UpcomingAfter: search.Some[int64](0), UpcomingStatuses: []string{"publish", "draft"}},
			"calendar_venues", map[string]any{filter: `(last_start_publish >= 0 AND last_start_publish != 0 OR last_start_draft >= 0 AND last_start_draft != 0)`}},
		{"every filter", search.PlaceQuery{Kind: search.Organizers, Statuses: []string{"publish"}, IDs: []int64{3, 4}, HasEvents: search.Some(true),
			UpcomingAfter: search.Some[int64](5), UpcomingStatuses: []string{"publish", "future"}}, "calendar_organizers",
			map[string]any{filter: `status IN ["publish"] AND id IN [3, 4] AND has_events = true AND (last_start_publish >= 5 OR last_start_future >= 5)`}},
		{"venue word", search.PlaceQuery{Kind: search.Venues, Query: "Temple!"}, "calendar_venues",
			map[string]any{"q": `temple `, "attributesToSearchOn": venueAttrs, "matchingStrategy": "all"}},
		{"organizer word", search.PlaceQuery{Kind: search.Organizers, Query: "info"}, "calendar_organizers",
			map[string]any{"q": `info`, "attributesToSearchOn": organizerAttrs, "matchingStrategy": "all"}},
		{"venue word in an unknown language searches the fields", search.PlaceQuery{Kind: search.Venues, Lang: "de", Query: "temple"}, "calendar_venues",
			map[string]any{"q": `temple`, "attributesToSearchOn": venueAttrs[3:], "matchingStrategy": "all"}},
		{"page", search.PlaceQuery{Kind: search.Venues, Offset: 20, Limit: 10}, "calendar_venues", map[string]any{"page": 3}},
		{"total only", search.PlaceQuery{Kind: search.Venues, Limit: -1}, "calendar_venues", map[string]any{"hitsPerPage": 0}},
	}
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs})
	f.AddIndex("calendar_venues", nil)
	f.AddIndex("calendar_organizers", nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Reset()
			q := tt.q
			if q.Lang == "" {
				q.Lang = "en"
			}
			if q.Limit == 0 {
				q.Limit = 10
			}
			if _, err := e.SearchPlaces(t.Context(), q); err != nil {
				t.Fatalf("SearchPlaces: %v", err)
			}
			checkSearches(t, f, "/indexes/"+tt.index+"/search", searchBody([]any{"publish_date:desc", "id:desc"}, tt.want))
		})
	}
}

// searchBody is the body of a search request for the first page of ten
// IDs in this sort order, with the keys of over set (a nil value removes
// the key).
func searchBody(sort []any, over map[string]any) map[string]any {
	body := map[string]any{
		"q": "", "hybrid": nil, "attributesToRetrieve": []any{"id"},
		"sort": sort, "page": 1, "hitsPerPage": 10,
	}
	for k, v := range over {
		body[k] = v
		if v == nil {
			delete(body, k)
		}
	}
	return body
}

// checkSearches requires exactly one search request, to path, with
// exactly the body want.
func checkSearches(t *testing.T, f *fakeMeili, path string, want ...map[string]any) {
	t.Helper()
	got := f.Calls(http.MethodPost, "/indexes/*")
	if len(got) != len(want) {
		t.Fatalf("%d search requests, want %d: %v", len(got), len(want), got)
	}
	for i, r := range got {
		if r.Path != path {
			t.Errorf("search %d sent to %s, want %s", i, r.Path, path)
		}
		if w := meilisim.JSONValue(want[i]); !reflect.DeepEqual(r.Body, w) {
			t.Errorf("search %d body\n got %s\nwant %s", i, meilisim.JSONString(r.Body), meilisim.JSONString(w))
		}
	}
}

// TestSearchMatchingNothingSendsNothing: queries that cannot match are
// answered without a request.
func TestSearchMatchingNothingSendsNothing(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs})
	ctx := t.Context()
	r, err := e.SearchEvents(ctx, search.EventQuery{Lang: "de", Query: "jazz", Limit: 10})
	if err != nil || r.Total != 0 || len(r.IDs) != 0 {
		t.Errorf("text in an unknown language = %+v, %v; want empty", r, err)
	}
	for _, statuses := range [][]string{nil, {"unknown"}} {
		r, err = e.SearchPlaces(ctx, search.PlaceQuery{Kind: search.Venues, UpcomingAfter: search.Some[int64](5), UpcomingStatuses: statuses, Limit: 10})
		if err != nil || r.Total != 0 || len(r.IDs) != 0 {
			t.Errorf("upcoming with statuses %q = %+v, %v; want empty", statuses, r, err)
		}
	}
	if got := f.Calls("", "/indexes/*"); len(got) != 0 {
		t.Errorf("requests sent: %v", got)
	}
}

// TestSearchResultPaging: IDs come from the hits of the page window, and
// Total from totalHits (exhaustive), never from estimatedTotalHits.
func TestSearchResultPaging(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs})
	// The service's pagination setting: the simulator, as Meilisearch,
	// returns no hit past maxTotalHits (default 1000).
	f.AddIndex("calendar_events", map[string]any{"pagination": map[string]any{"maxTotalHits": maxTotalHits}})
	var docs []map[string]any
	for id := 1; id <= 1234; id++ {
		docs = append(docs, map[string]any{"id": id, "title_en": "x"})
	}
	f.Hits = func(string, map[string]any) []map[string]any { return docs }
	ids := func(from, to int) []int64 {
		var out []int64
		for i := from; i <= to; i++ {
			out = append(out, int64(i))
		}
		return out
	}
	tests := []struct {
		offset, limit int
		want          []int64
	}{
		{0, 5, ids(1, 5)},
		{10, 10, ids(11, 20)},
		{3, 5, ids(4, 8)},
		{998, 5, ids(999, 1003)},
		{1230, 10, ids(1231, 1234)},
		{1234, 10, nil},
		{100000, 8, nil},
		{0, 0, nil},
		{7, 0, nil},
	}
	for _, tt := range tests {
		r, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Statuses: []string{"publish"}, Offset: tt.offset, Limit: tt.limit})
		if err != nil {
			t.Fatalf("offset %d limit %d: %v", tt.offset, tt.limit, err)
		}
		if r.Total != 1234 || !slices.Equal(r.IDs, tt.want) && !(len(r.IDs) == 0 && len(tt.want) == 0) {
			t.Errorf("offset %d limit %d = %d %v, want 1234 %v", tt.offset, tt.limit, r.Total, r.IDs, tt.want)
		}
	}
}

// TestNearDecidesTheEdge: a Near query first fetches the points in a thin
// ring around the circle's edge (edgeRing: millimetres wide) and decides
// them with search.GeoCircle.Contains, then sends the query with the inner
// circle or the IDs found inside.
func TestNearDecidesTheEdge(t *testing.T) {
	t.Parallel()
	paris := search.GeoPoint{Lat: 48.8566, Lng: 2.3522}
	onEdge := search.GeoPoint{Lat: 48.9, Lng: 2.4}
	radius := search.DistanceKm(paris, onEdge)
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs})
	f.AddIndex("calendar_events", nil)
	ring := []map[string]any{
		{"id": 1, "key": "1", "_geo": map[string]any{"lat": onEdge.Lat, "lng": onEdge.Lng}},
		{"id": 2, "key": "2", "_geo": map[string]any{"lat": 48.90001, "lng": 2.4}},
		{"id": 3, "key": "3", "_geo": map[string]any{"lat": paris.Lat, "lng": paris.Lng}},
	}
	f.Hits = func(_ string, body map[string]any) []map[string]any {
		if body["sort"] == nil {
			return ring
		}
		return []map[string]any{{"id": 9}, {"id": 1}}
	}
	inner, outer := edgeRing(radius * 1000)
	if outer-inner > 0.005 {
		t.Fatalf("ring [%v, %v] m for a radius of %v km: want millimetres", inner, outer, radius)
	}
	_, outerZero := edgeRing(0)
	tests := []struct {
		name       string
		radius     float64
		ringFilter string
		filter     string
		requests   int
	}{
		{"on the edge", radius,
			fmt.Sprintf(`featured = true AND _geoRadius(48.8566, 2.3522, %s) AND NOT _geoRadius(48.8566, 2.3522, %s)`, number(outer), number(inner)),
			fmt.Sprintf(`featured = true AND (_geoRadius(48.8566, 2.3522, %s) OR key IN ["1", "3"])`, number(inner)), 2},
		{"just inside the edge", radius - 1e-12,
			"", // not checked
			"", 2},
		{"radius zero", 0,
			fmt.Sprintf(`featured = true AND _geoRadius(48.8566, 2.3522, %s)`, number(outerZero)),
			`featured = true AND key IN ["3"]`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Reset()
			q := search.EventQuery{Lang: "en", Statuses: []string{"publish"}, Query: "jazz", Featured: search.Some(true), Limit: 10,
				Near: search.Some(search.GeoCircle{Center: paris, RadiusKm: tt.radius})}
			r, err := e.SearchEvents(t.Context(), q)
			if err != nil {
				t.Fatalf("SearchEvents: %v", err)
			}
			got := f.Calls(http.MethodPost, "/indexes/calendar_events/search")
			if len(got) != tt.requests {
				t.Fatalf("%d requests, want %d", len(got), tt.requests)
			}
			first, second := got[0].Body.(map[string]any), got[1].Body.(map[string]any)
			if first["q"] != `jazz` || second["q"] != `jazz` {
				t.Errorf("q = %v, %v; want the text query in both", first["q"], second["q"])
			}
			if !reflect.DeepEqual(first["attributesToRetrieve"], []any{"key", "_geo"}) || first["hitsPerPage"] != float64(maxTotalHits) {
				t.Errorf("ring request %s: want key and _geo of every hit", meilisim.JSONString(first))
			}
			const status = `status IN ["publish"] AND `
			if tt.ringFilter != "" && first["filter"] != status+tt.ringFilter {
				t.Errorf("ring filter\n got %s\nwant %s", first["filter"], tt.ringFilter)
			}
			if tt.filter != "" && second["filter"] != status+tt.filter {
				t.Errorf("filter\n got %s\nwant %s", second["filter"], tt.filter)
			}
			if tt.name == "just inside the edge" && !strings.HasSuffix(second["filter"].(string), `OR key IN ["3"])`) {
				t.Errorf("a radius one step below the point's distance must leave it out: %s", second["filter"])
			}
			if r.Total != 2 || !slices.Equal(r.IDs, []int64{9, 1}) {
				t.Errorf("result = %+v, want the second request's hits", r)
			}
		})
	}

	// Nothing in the ring and no inner circle: nothing can match.
	f.Reset()
	f.Hits = nil
	r, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Statuses: []string{"publish"}, Limit: 10, Near: search.Some(search.GeoCircle{Center: paris})})
	if err != nil || r.Total != 0 || len(r.IDs) != 0 {
		t.Errorf("empty ring = %+v, %v; want empty", r, err)
	}
	if got := f.Calls(http.MethodPost, "/indexes/calendar_events/search"); len(got) != 1 {
		t.Errorf("%d requests, want only the ring's", len(got))
	}
}

// TestPlaceWordsInOneField: a multi-word place query keeps the places
// with every word in one field, pages them in the place order, and counts
// them exactly, in one federated multi-search of one query per searchable
// attribute. Runs against the fake and a real server.
func TestPlaceWordsInOneField(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	e := tg.engine(t, tg.master, Options{Languages: testLangs})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	en := func(title, desc, excerpt string) map[string]search.Text {
		return map[string]search.Text{"en": {Title: title, Description: desc, Excerpt: excerpt}}
	}
	venue := func(id, published int64, text map[string]search.Text, fields map[string]string) search.PlaceDocument {
		return search.PlaceDocument{ID: id, Kind: search.Venues, Status: "publish", PublishDate: published, Text: text, Fields: fields}
	}
	docs := []search.PlaceDocument{
		venue(10, 600, en("Jazz Club", "", ""), map[string]string{"city": "Amsterdam"}),                     // split: out
		venue(11, 500, en("Temple Club", "", ""), map[string]string{"address": "12, Avenue du Louvre"}),     // split: out
		venue(12, 400, en("Temple Hall", "", ""), map[string]string{"address": "1, Temple Avenue"}),         // in (address)
		venue(13, 300, en("", "avenue of the temple", ""), map[string]string{"city": "Paris"}),              // in (description)
		venue(14, 200, en("Temple-avenue", "", ""), map[string]string{"zip": "lane"}),                       // in (title: both parts)
		venue(15, 100, en("Avenue", "", "TEMPLE! avenue"), map[string]string{"address": "Temple Avenue 3"}), // in (excerpt and address: once)
	}
	if err := e.IndexPlaces(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if tg.fake != nil {
		tg.fake.Reset()
	}
	tests := []struct {
		offset, limit int
		want          []int64
	}{
		{0, 2, []int64{12, 13}},
		{2, 2, []int64{14, 15}},
		{1, 1, []int64{13}},
		{0, 0, []int64{}},
		{3, 5, []int64{15}},
		{4, 5, []int64{}},
	}
	for _, tt := range tests {
		q := search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: "Temple avenue", Offset: tt.offset, Limit: tt.limit}
		r, err := e.SearchPlaces(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if r.Total != 4 || !slices.Equal(r.IDs, tt.want) {
			t.Errorf("offset %d limit %d = %+v, want total 4, IDs %v", tt.offset, tt.limit, r, tt.want)
		}
	}
	if tg.fake == nil {
		return
	}
	got := tg.fake.Calls(http.MethodPost, "*")
	if len(got) != len(tests) {
		t.Fatalf("%d requests for %d pages: %+v", len(got), len(tests), got)
	}
	body := got[0].Body.(map[string]any)
	if got[0].Path != "/multi-search" || !reflect.DeepEqual(body["federation"], map[string]any{"limit": float64(2)}) {
		t.Errorf("request %s %s", got[0].Path, meilisim.JSONString(body))
	}
	var on []any
	for _, q := range body["queries"].([]any) {
		q := q.(map[string]any)
		if q["indexUid"] != "calendar_venues" || q["q"] != "temple avenue" || q["matchingStrategy"] != "all" ||
			!reflect.DeepEqual(q["sort"], []any{"publish_date:desc", "id:desc"}) || !reflect.DeepEqual(q["attributesToRetrieve"], []any{"id"}) {
			t.Errorf("query %s", meilisim.JSONString(q))
		}
		on = append(on, q["attributesToSearchOn"].([]any)...)
	}
	wantOn := []any{"title_en", "description_en", "excerpt_en",
		"field_address", "field_city", "field_province", "field_state", "field_stateprovince", "field_zip", "field_phone"}
	if !reflect.DeepEqual(on, wantOn) {
		t.Errorf("one query per attribute: %v, want %v", on, wantOn)
	}
}

// TestPlaceWordsInOneFieldCost: the requests of a multi-word place query,
// and the hits they bring back, do not grow with the number of places
// that match: one request per page, a page's worth of hits.
func TestPlaceWordsInOneFieldCost(t *testing.T) {
	t.Parallel()
	type cost struct{ requests, hits, bytes int }
	measure := func(n int) cost {
		f := newFakeMeili(t)
		f.Emulate = true
		e := f.engine(Options{Languages: testLangs})
		if err := e.Init(t.Context()); err != nil {
			t.Fatal(err)
		}
		docs := make([]search.PlaceDocument, n)
		for i := range docs {
			docs[i] = search.PlaceDocument{ID: int64(i + 1), Kind: search.Venues, Status: "publish", PublishDate: int64(i),
				Text: map[string]search.Text{"en": {Title: "Temple Avenue Hall"}}, Fields: map[string]string{"city": "Temple avenue"}}
		}
		if err := e.IndexPlaces(t.Context(), docs); err != nil {
			t.Fatal(err)
		}
		f.Reset()
		f.Mu.Lock()
		f.Served = 0
		f.Mu.Unlock()
		r, err := e.SearchPlaces(t.Context(), search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: "temple avenue", Offset: 8, Limit: 8})
		if err != nil || r.Total != n || len(r.IDs) != 8 {
			t.Fatalf("%d places: %+v, %v", n, r, err)
		}
		c := cost{requests: len(f.Calls("", "*"))}
		for _, req := range f.Calls("", "*") {
			raw, _ := json.Marshal(req.Body)
			c.bytes += len(raw)
		}
		f.Mu.Lock()
		c.hits = f.Served
		f.Mu.Unlock()
		return c
	}
	small, large := measure(20), measure(2000)
	if small != large {
		t.Errorf("cost with 20 matching places %+v, with 2000 %+v: it grows with the data", small, large)
	}
	if large.requests != 1 || large.hits != 8 {
		t.Errorf("cost %+v, want one request and 8 hits", large)
	}
}

// wantEventSettings is the settings payload of the events index with the
// test languages.
var wantEventSettings = map[string]any{
	"rankingRules":         []any{"sort", "words", "typo", "proximity", "attribute", "exactness"},
	"searchableAttributes": eventAttrs,
	"filterableAttributes": []any{"id", "key", "status", "start", "end", "category_ids", "tag_ids", "venue_ids", "organizer_ids",
		"featured", "ticketed", "has_geo", "_geo", "parent_id", "hide_from_listings", "has_password", "gen", "langs", "event_status"},
	"sortableAttributes": []any{"start", "publish_date", "id", "occurrence"},
	"typoTolerance": map[string]any{"enabled": true, "minWordSizeForTypos": map[string]any{"oneTypo": 5, "twoTypos": 9},
		"disableOnWords": []any{}, "disableOnAttributes": []any{}, "disableOnNumbers": true},
	"pagination":     map[string]any{"maxTotalHits": 1000000},
	"faceting":       map[string]any{"maxValuesPerFacet": 1000000, "sortFacetValuesBy": map[string]any{"*": "alpha"}},
	"prefixSearch":   "indexingTime",
	"searchCutoffMs": 60000,
}

// placeSettings is the settings payload of a place index.
func placeSettings(fields ...string) map[string]any {
	s := maps.Clone(wantEventSettings)
	searchable := slices.Clone(eventAttrs[len(baseOn):]) // no base text: documents.go
	for _, f := range fields {
		searchable = append(searchable, "field_"+f)
	}
	s["searchableAttributes"] = searchable
	s["filterableAttributes"] = []any{"id", "status", "has_events", "last_start_publish", "last_start_future",
		"last_start_draft", "last_start_pending", "last_start_private", "last_start_trash"}
	s["sortableAttributes"] = []any{"publish_date", "id"}
	return s
}

var (
	wantVenueSettings     = placeSettings("address", "city", "province", "state", "stateprovince", "zip", "phone")
	wantOrganizerSettings = placeSettings("phone", "email", "website")
)

func TestInitCreatesIndexesAndSettings(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	f.stepOnPoll()
	e := f.engine(Options{Languages: testLangs})
	if err := e.Init(t.Context()); err != nil {
		t.Fatalf("Init: %v", err)
	}
	wantWrites := []string{
		"POST /indexes", "PATCH /indexes/calendar_events/settings",
		"POST /indexes", "PATCH /indexes/calendar_events_hidden/settings",
		"POST /indexes", "PATCH /indexes/calendar_venues/settings",
		"POST /indexes", "PATCH /indexes/calendar_organizers/settings",
		// Empty indexes: recorded as written under the current scheme.
		"POST /indexes/calendar_meta/documents",
	}
	if got := f.Writes(); !slices.Equal(got, wantWrites) {
		t.Errorf("writes = %q, want %q", got, wantWrites)
	}
	creates := f.Calls(http.MethodPost, "/indexes")
	for i, uid := range []string{"calendar_events", "calendar_events_hidden", "calendar_venues", "calendar_organizers"} {
		pk := "id"
		if i < 2 {
			pk = "key" // one event document per occurrence
		}
		if want := meilisim.JSONValue(map[string]any{"uid": uid, "primaryKey": pk}); !reflect.DeepEqual(creates[i].Body, want) {
			t.Errorf("create %d = %s, want %s", i, meilisim.JSONString(creates[i].Body), meilisim.JSONString(want))
		}
	}
	for uid, want := range map[string]map[string]any{
		"calendar_events": wantEventSettings, "calendar_events_hidden": wantEventSettings,
		"calendar_venues": wantVenueSettings, "calendar_organizers": wantOrganizerSettings,
	} {
		got := f.Calls(http.MethodPatch, "/indexes/"+uid+"/settings")
		if len(got) != 1 || !reflect.DeepEqual(got[0].Body, meilisim.JSONValue(want)) {
			t.Errorf("%s settings\n got %s\nwant %s", uid, meilisim.JSONString(got), meilisim.JSONString(want))
		}
	}
	// Every task was awaited: each write's task was polled to its end.
	if polls := f.Calls(http.MethodGet, "/tasks/*"); len(polls) < 2*len(wantWrites) {
		t.Errorf("%d task polls for %d tasks (each is unfinished on its first poll)", len(polls), len(wantWrites))
	}
	for _, r := range f.Calls("", "*") {
		if r.Auth != "Bearer test-key" {
			t.Fatalf("%s %s: Authorization = %q", r.Method, r.Path, r.Auth)
		}
	}

	// A second Init finds everything in place and writes nothing.
	f.Reset()
	if err := e.Init(t.Context()); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if got := f.Writes(); len(got) != 0 {
		t.Errorf("second Init wrote %q", got)
	}
	if got := f.Calls(http.MethodGet, "/indexes/*"); len(got) != 9 {
		t.Errorf("second Init read %d times, want an index and its settings for each index, and the scheme record", len(got))
	}
}

func TestInitReconcilesLiveSettings(t *testing.T) {
	t.Parallel()
	reordered := maps.Clone(wantEventSettings)
	filterable := slices.Clone(wantEventSettings["filterableAttributes"].([]any))
	slices.Reverse(filterable)
	reordered["filterableAttributes"] = filterable

	drifted := func(key string, v any) map[string]any {
		s := maps.Clone(wantEventSettings)
		s[key] = v
		return s
	}
	tests := []struct {
		name   string
		live   map[string]any
		update bool
	}{
		{"same settings", wantEventSettings, false},
		{"filterable attributes in another order", reordered, false},
		{"default ranking rules", drifted("rankingRules", []any{"words", "typo", "proximity", "attribute", "sort", "exactness"}), true},
		// The live order of the attributes is kept (mergeSettings).
		{"searchable attributes reordered", drifted("searchableAttributes", []any{"title_nl", "description_nl", "excerpt_nl", "title_en", "description_en", "excerpt_en", "title__base", "description__base", "excerpt__base"}), false},
		{"missing filterable attribute", drifted("filterableAttributes", []any{"id", "status"}), true},
		{"missing sortable attribute", drifted("sortableAttributes", []any{"start", "id"}), true},
		{"typo tolerance off", drifted("typoTolerance", map[string]any{"enabled": false, "minWordSizeForTypos": map[string]any{"oneTypo": 5, "twoTypos": 9},
			"disableOnWords": []any{}, "disableOnAttributes": []any{}, "disableOnNumbers": true}), true},
		{"typos on numbers", drifted("typoTolerance", map[string]any{"enabled": true, "minWordSizeForTypos": map[string]any{"oneTypo": 5, "twoTypos": 9},
			"disableOnWords": []any{}, "disableOnAttributes": []any{}, "disableOnNumbers": false}), true},
		{"other word sizes for typos", drifted("typoTolerance", map[string]any{"enabled": true, "minWordSizeForTypos": map[string]any{"oneTypo": 4, "twoTypos": 8},
			"disableOnWords": []any{}, "disableOnAttributes": []any{}, "disableOnNumbers": true}), true},
		{"default search cutoff", drifted("searchCutoffMs", nil), true},
		{"default max values per facet", drifted("faceting", map[string]any{"maxValuesPerFacet": 100, "sortFacetValuesBy": map[string]any{"*": "alpha"}}), true},
		{"default max total hits", drifted("pagination", map[string]any{"maxTotalHits": 1000}), true},
		{"prefix search off", drifted("prefixSearch", "disabled"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeMeili(t)
			e := f.engine(Options{Languages: testLangs})
			f.AddIndex("calendar_events", tt.live)
			if err := e.EnsureIndex(t.Context(), "calendar_events", EventIndex); err != nil {
				t.Fatalf("EnsureIndex: %v", err)
			}
			patches := f.Calls(http.MethodPatch, "/indexes/calendar_events/settings")
			if tt.update != (len(patches) == 1) || len(patches) > 1 {
				t.Fatalf("%d settings updates, want update %v", len(patches), tt.update)
			}
			if want := meilisim.JSONValue(wantEventSettings).(map[string]any); tt.update && !reflect.DeepEqual(sortedLists(patches[0].Body), sortedLists(want)) {
				t.Errorf("update = %s", meilisim.JSONString(patches[0].Body))
			}
			if got := f.Calls(http.MethodPost, "/indexes"); len(got) != 0 {
				t.Errorf("an existing index was created again")
			}
		})
	}
}

// sortedLists returns a settings body with the attribute lists sorted
// (they are sets, whose merged order follows the live index).
func sortedLists(body any) any {
	m, ok := body.(map[string]any)
	if !ok {
		return body
	}
	out := maps.Clone(m)
	for _, k := range []string{"filterableAttributes", "sortableAttributes"} {
		if list, ok := out[k].([]any); ok {
			list = slices.Clone(list)
			slices.SortFunc(list, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			out[k] = list
		}
	}
	return out
}

// TestSettingsMergeKeepsWhatAnotherProcessAdded: a process that knows
// fewer languages, fields or statuses than the live index (another replica
// learned them, or an older release) reconciles without removing them:
// that replica's searches on its attributes keep working.
func TestSettingsMergeKeepsWhatAnotherProcessAdded(t *testing.T) {
	t.Parallel()
	live := maps.Clone(wantEventSettings)
	live["searchableAttributes"] = append(slices.Clone(eventAttrs), "title_de", "description_de", "excerpt_de")
	live["filterableAttributes"] = append(slices.Clone(wantEventSettings["filterableAttributes"].([]any)), "venue_city")
	live["sortableAttributes"] = []any{"start", "publish_date", "id", "end"}
	live["prefixSearch"] = "disabled" // an older release's setting: replaced
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs})
	f.AddIndex("calendar_events", live)
	if err := e.EnsureIndex(t.Context(), "calendar_events", EventIndex); err != nil {
		t.Fatalf("EnsureIndex: %v", err)
	}
	patches := f.Calls(http.MethodPatch, "/indexes/calendar_events/settings")
	if len(patches) != 1 {
		t.Fatalf("%d settings updates, want 1", len(patches))
	}
	body := patches[0].Body.(map[string]any)
	if want := meilisim.JSONValue(live["searchableAttributes"]); !reflect.DeepEqual(body["searchableAttributes"], want) {
		t.Errorf("searchableAttributes = %v, want the live ones kept: %v", body["searchableAttributes"], want)
	}
	if !slices.Contains(body["filterableAttributes"].([]any), any("venue_city")) || !slices.Contains(body["sortableAttributes"].([]any), any("end")) {
		t.Errorf("filterable %v / sortable %v lost an attribute of the live index", body["filterableAttributes"], body["sortableAttributes"])
	}
	if body["prefixSearch"] != "indexingTime" {
		t.Errorf("prefixSearch = %v, want indexingTime", body["prefixSearch"])
	}
	// The German searches of the other process still name searchable
	// attributes (the fake refuses unknown ones as Meilisearch does).
	f.Reset()
	f.Emulate = true
	if _, err := e.client.Index("calendar_events").SearchWithContext(t.Context(), "jazz", &meilisearch.SearchRequest{
		AttributesToSearchOn: []string{"title_de", "description_de", "excerpt_de"}, MatchingStrategy: meilisearch.All,
	}); err != nil {
		t.Errorf("a search on the other process's attributes failed: %v", err)
	}
	// A second reconcile finds nothing to change.
	f.Reset()
	if err := e.EnsureIndex(t.Context(), "calendar_events", EventIndex); err != nil {
		t.Fatal(err)
	}
	if got := f.Writes(); len(got) != 0 {
		t.Errorf("second reconcile wrote %q", got)
	}
}

func TestInitRejectsAnotherPrimaryKey(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.engine(Options{})
	f.AddIndex("calendar_events", nil)
	f.Indexes["calendar_events"].PrimaryKey = "uuid"
	if err := e.Init(t.Context()); err == nil || !strings.Contains(err.Error(), `primary key "uuid"`) {
		t.Errorf("Init = %v, want a primary key error", err)
	}
}

func TestEventDocumentShape(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.initialisedEngine(Options{Languages: testLangs})
	docs := []search.EventDocument{{
		ID: 101, Status: "publish", Author: 3, PublishDate: 1700000000,
		Start: 1735722000, End: 1735729200, StartLocal: 1735725600, EndLocal: 1735732800,
		AllDay: true, Featured: true, Ticketed: true, Sticky: true, HideFromListings: true, HasPassword: true, EventStatus: "postponed",
		CategoryIDs: []int64{1, 4}, CategorySlugs: []string{"cat-1", "cat-4"}, TagIDs: []int64{12}, TagSlugs: []string{"tag-12"},
		VenueIDs: []int64{201}, OrganizerIDs: []int64{301, 302},
		Geo: &search.GeoPoint{Lat: 52.3676, Lng: -4.9041}, HasGeo: true, ParentID: 100,
		Text: map[string]search.Text{
			"en": {Title: "Jazz night", Description: "Live \"jazz\"", Excerpt: "Jazz"},
			"nl": {Title: "Jazzavond"},
		},
	}, {
		ID: 102, Status: "draft", Text: map[string]search.Text{"en": {Title: "Plain"}},
	}}
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}
	// Every event goes to the editor index, the published one to the
	// published index too; each addition is followed by the deletion of
	// the events' documents of other writes (hidden.go).
	if got := f.Writes(); !slices.Equal(got, []string{
		"POST /indexes/calendar_events_hidden/documents", "POST /indexes/calendar_events/documents",
		"POST /indexes/calendar_events_hidden/documents/delete", "POST /indexes/calendar_events/documents/delete",
	}) {
		t.Fatalf("writes = %q", got)
	}
	r := f.Calls(http.MethodPost, "/indexes/calendar_events_hidden/documents")[0]
	published := f.Calls(http.MethodPost, "/indexes/calendar_events/documents")[0].Body.([]any)
	if len(published) != 1 || !reflect.DeepEqual(published[0], r.Body.([]any)[0]) {
		t.Errorf("published documents %s, want the editor index's first", meilisim.JSONString(published))
	}
	// One write generation for the whole write, and the deletion keeps it.
	gen := r.Body.([]any)[0].(map[string]any)["gen"]
	for _, d := range r.Body.([]any) {
		if g := d.(map[string]any)["gen"]; g == nil || g != gen {
			t.Errorf("document generation %v, want %v", g, gen)
		}
		delete(d.(map[string]any), "gen")
	}
	if del := f.Calls(http.MethodPost, "/indexes/calendar_events_hidden/documents/delete")[0].Body.(map[string]any)["filter"]; del != fmt.Sprintf("id IN [101, 102] AND gen != %.0f", gen) {
		t.Errorf("deletion filter %v", del)
	}
	if r.Query != "primaryKey=key" {
		t.Errorf("query = %q, want primaryKey=key", r.Query)
	}
	want := []any{
		map[string]any{
			"id": 101, "key": "101", "status": "publish", "author": 3, "publish_date": 1700000000,
			"start": 1735722000, "end": 1735729200, "start_local": 1735725600, "end_local": 1735732800,
			"all_day": true, "featured": true, "ticketed": true, "sticky": true, "hide_from_listings": true, "has_password": true,
			"event_status": "postponed",
			"category_ids": []any{1, 4}, "category_slugs": []any{"cat-1", "cat-4"}, "tag_ids": []any{12}, "tag_slugs": []any{"tag-12"},
			"venue_ids": []any{201}, "organizer_ids": []any{301, 302},
			"_geo": map[string]any{"lat": 52.3676, "lng": -4.9041}, "has_geo": true, "parent_id": 100,
			// The base text (the default language's, en) once, and Dutch,
			// which has a text of its own (documents.go).
			"title__base": "Jazz night", "description__base": "Live \"jazz\"", "excerpt__base": "Jazz",
			"title_nl": "Jazzavond", "description_nl": "", "excerpt_nl": "", "langs": []any{"nl"},
		},
		// Every boolean and list is written, false and empty included;
		// no _geo without a point.
		map[string]any{
			"id": 102, "key": "102", "status": "draft", "author": 0, "publish_date": 0,
			"start": 0, "end": 0, "start_local": 0, "end_local": 0,
			"all_day": false, "featured": false, "ticketed": false, "sticky": false, "hide_from_listings": false, "has_password": false,
			"event_status": "scheduled", // none set: the default
			"category_ids": []any{}, "category_slugs": []any{}, "tag_ids": []any{}, "tag_slugs": []any{},
			"venue_ids": []any{}, "organizer_ids": []any{}, "has_geo": false, "parent_id": 0,
			"title__base": "Plain", "description__base": "", "excerpt__base": "", "langs": []any{},
		},
	}
	if w := meilisim.JSONValue(want); !reflect.DeepEqual(r.Body, w) {
		t.Errorf("documents\n got %s\nwant %s", meilisim.JSONString(r.Body), meilisim.JSONString(w))
	}
}

func TestPlaceDocumentShape(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.initialisedEngine(Options{Languages: testLangs})
	docs := []search.PlaceDocument{{
		ID: 201, Kind: search.Venues, Status: "publish", PublishDate: 1700000000, HasEvents: true,
		Text:      map[string]search.Text{"en": {Title: "Jazz Club", Description: "Cellar"}, "nl": {Title: "Jazzclub"}},
		Fields:    map[string]string{"address": "1, Temple Street", "city": "Paris"},
		LastStart: map[string]int64{"publish": 1735722000, "private": 1735000000},
	}, {
		ID: 301, Kind: search.Organizers, Status: "draft",
		Text: map[string]search.Text{"en": {Title: "Acme"}},
	}}
	if err := e.IndexPlaces(t.Context(), docs); err != nil {
		t.Fatalf("IndexPlaces: %v", err)
	}
	if got := f.Writes(); !slices.Equal(got, []string{"POST /indexes/calendar_venues/documents", "POST /indexes/calendar_organizers/documents"}) {
		t.Fatalf("writes = %q", got)
	}
	zero := map[string]any{"last_start_publish": 0, "last_start_future": 0, "last_start_draft": 0,
		"last_start_pending": 0, "last_start_private": 0, "last_start_trash": 0}
	venue := map[string]any{
		"id": 201, "kind": "venue", "status": "publish", "publish_date": 1700000000, "has_events": true,
		"title_en": "Jazz Club", "description_en": "Cellar", "excerpt_en": "",
		"title_nl": "Jazzclub", "description_nl": "", "excerpt_nl": "",
		"field_address": "1, Temple Street", "field_city": "Paris",
	}
	maps.Copy(venue, zero)
	venue["last_start_publish"], venue["last_start_private"] = 1735722000, 1735000000
	organizer := map[string]any{
		"id": 301, "kind": "organizer", "status": "draft", "publish_date": 0, "has_events": false,
		"title_en": "Acme", "description_en": "", "excerpt_en": "",
	}
	maps.Copy(organizer, zero)
	for i, want := range []map[string]any{venue, organizer} {
		r := f.Calls(http.MethodPost, "/indexes/*")[i]
		if w := meilisim.JSONValue([]any{want}); !reflect.DeepEqual(r.Body, w) {
			t.Errorf("%s\n got %s\nwant %s", r.Path, meilisim.JSONString(r.Body), meilisim.JSONString(w))
		}
	}
}

// TestNewVocabularyExtendsSettingsFirst: a document in a language (or with
// a field or status) the settings do not know updates the settings, and
// waits for them, before the documents are sent.
func TestNewVocabularyExtendsSettingsFirst(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.initialisedEngine(Options{Languages: []string{"en"}})
	err := e.IndexPlaces(t.Context(), []search.PlaceDocument{{
		ID: 1, Kind: search.Venues, Text: map[string]search.Text{"fr": {Title: "Salle"}, "en": {Title: "Hall"}},
		Fields: map[string]string{"country": "France"}, LastStart: map[string]int64{"archived": 5},
	}})
	if err != nil {
		t.Fatalf("IndexPlaces: %v", err)
	}
	want := []string{
		"PATCH /indexes/calendar_events/settings", "PATCH /indexes/calendar_events_hidden/settings", "PATCH /indexes/calendar_venues/settings",
		"PATCH /indexes/calendar_organizers/settings", "POST /indexes/calendar_venues/documents",
	}
	if got := f.Writes(); !slices.Equal(got, want) {
		t.Fatalf("writes = %q, want %q", got, want)
	}
	venues := f.Calls(http.MethodPatch, "/indexes/calendar_venues/settings")[0].Body.(map[string]any)
	// The live attributes keep their order; the new ones follow
	// (mergeSettings).
	wantSearchable := meilisim.JSONValue([]string{"title_en", "description_en", "excerpt_en",
		"field_address", "field_city", "field_province", "field_state", "field_stateprovince", "field_zip", "field_phone",
		"title_fr", "description_fr", "excerpt_fr", "field_country"})
	if !reflect.DeepEqual(venues["searchableAttributes"], wantSearchable) {
		t.Errorf("venue searchable attributes = %v", venues["searchableAttributes"])
	}
	if filterable := venues["filterableAttributes"].([]any); !slices.Contains(filterable, any("last_start_archived")) {
		t.Errorf("venue filterable attributes = %v, want last_start_archived", filterable)
	}
	doc := f.Calls(http.MethodPost, "/indexes/calendar_venues/documents")[0].Body.([]any)[0].(map[string]any)
	if doc["last_start_archived"] != float64(5) || doc["title_fr"] != "Salle" || doc["field_country"] != "France" {
		t.Errorf("document = %s", meilisim.JSONString(doc))
	}

	// The new language is searchable at once; known words change nothing.
	f.Reset()
	if _, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "fr", Query: "salle", Limit: 1, Statuses: []string{"publish"}}); err != nil {
		t.Fatal(err)
	}
	body := f.Calls(http.MethodPost, "/indexes/calendar_events/search")[0].Body.(map[string]any)
	if !reflect.DeepEqual(body["attributesToSearchOn"], []any{"title_fr", "description_fr", "excerpt_fr"}) {
		t.Errorf("attributesToSearchOn = %v", body["attributesToSearchOn"])
	}
	f.Reset()
	if err := e.IndexEvents(t.Context(), []search.EventDocument{{ID: 2, Status: "publish", Text: map[string]search.Text{"fr": {}, "en": {}}}}); err != nil {
		t.Fatal(err)
	}
	if got := f.Writes(); !slices.Equal(got, []string{"POST /indexes/calendar_events_hidden/documents", "POST /indexes/calendar_events/documents", "POST /indexes/calendar_events_hidden/documents/delete", "POST /indexes/calendar_events/documents/delete"}) {
		t.Errorf("writes = %q, want only the documents", got)
	}
}

func TestBatching(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.initialisedEngine(Options{})
	docs := make([]search.EventDocument, 2500)
	ids := make([]int64, 2500)
	for i := range docs {
		docs[i] = search.EventDocument{ID: int64(i + 1), Status: "publish"}
		ids[i] = int64(i + 1)
	}
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}
	if err := e.DeleteEvents(t.Context(), ids); err != nil {
		t.Fatalf("DeleteEvents: %v", err)
	}
	var sizes, order []string
	deletes := 0
	for _, r := range f.Calls("", "*") {
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/search"):
			// Which of the events each index holds (a read).
		case r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/documents/delete"):
			// A deletion by filter: id IN [...] of at most maxFilterValues
			// IDs (filter.go), in order.
			filter := r.Body.(map[string]any)["filter"].(string)
			sizes = append(sizes, fmt.Sprintf("delete %d", strings.Count(filter, ",")+1))
			order = append(order, "write")
			if first := deletes % (2500 / maxFilterValues) * maxFilterValues; !strings.HasPrefix(filter, fmt.Sprintf("id IN [%d, ", first+1)) {
				t.Errorf("delete filter %d starts %.20s", deletes, filter)
			}
			deletes++
		case r.Method == http.MethodPost:
			batch := r.Body.([]any)
			sizes = append(sizes, fmt.Sprintf("%s %d", r.Path[strings.LastIndex(r.Path, "/")+1:], len(batch)))
			order = append(order, "write")
		case strings.HasPrefix(r.Path, "/tasks/") && (len(order) == 0 || order[len(order)-1] != "wait"):
			order = append(order, "wait")
		}
	}
	// IndexEvents adds to both event indexes (each request awaited before
	// the next), then deletes the replaced documents of both; DeleteEvents
	// deletes from both (hidden.go). Deletions are cut into filters of
	// maxFilterValues IDs, those of one index queued together (one batch
	// in Meilisearch), then awaited.
	perIndex := 2500 / maxFilterValues
	add := []string{"documents 1000", "documents 1000", "documents 500"}
	wantSizes := slices.Concat(add, add, slices.Repeat([]string{fmt.Sprintf("delete %d", maxFilterValues)}, 4*perIndex))
	if !slices.Equal(sizes, wantSizes) {
		t.Errorf("batches = %q, want %q", sizes, wantSizes)
	}
	wantOrder := slices.Repeat([]string{"write", "wait"}, 6)
	for range 4 {
		wantOrder = append(append(wantOrder, slices.Repeat([]string{"write"}, perIndex)...), "wait")
	}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("order = %q: each addition must be awaited before the next, the deletions of an index queued together", order)
	}
	if n, err := e.CountEvents(t.Context()); err != nil || n != 0 {
		t.Errorf("CountEvents = %d, %v; want 0 after deleting everything", n, err)
	}
}

func TestFailedTaskIsAnError(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.initialisedEngine(Options{BatchSize: 2})
	f.FailTasks["documentAdditionOrUpdate"] = meilisim.NewAPIError("invalid_document_id", "Document identifier `x` is invalid.")
	err := e.IndexEvents(t.Context(), []search.EventDocument{{ID: 1, Status: "publish"}, {ID: 2, Status: "publish"}, {ID: 3, Status: "publish"}})
	var te *TaskError
	if !errors.As(err, &te) || te.Code != "invalid_document_id" || te.Status != "failed" || te.Type != "documentAdditionOrUpdate" || te.IndexUID != "calendar_events_hidden" {
		t.Fatalf("IndexEvents = %#v, want a failed TaskError", err)
	}
	if !strings.Contains(err.Error(), "invalid_document_id") || !strings.Contains(err.Error(), "is invalid") {
		t.Errorf("error %q does not name the task error", err)
	}
	if errors.Is(err, search.ErrUnavailable) {
		t.Errorf("a failed task is not unavailability: %v", err)
	}
	if got := slices.DeleteFunc(f.Writes(), func(w string) bool { return strings.HasSuffix(w, "/search") }); len(got) != 1 {
		t.Errorf("writes after a failed batch = %q, want the failed one only", got)
	}

	f.FailTasks = map[string]meilisim.APIError{"settingsUpdate": meilisim.NewAPIError("invalid_settings_filterable_attributes", "bad")}
	f2 := newFakeMeili(t)
	f2.FailTasks = f.FailTasks
	if err := f2.engine(Options{}).Init(t.Context()); !errors.As(err, &te) || te.Code != "invalid_settings_filterable_attributes" {
		t.Errorf("Init with a failing settings task = %v", err)
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	answer := func(status int, code string) func(*http.Request) (int, any, bool) {
		return func(r *http.Request) (int, any, bool) {
			if r.URL.Path == "/health" {
				return 0, nil, false
			}
			return status, meilisim.NewAPIError(code, "boom"), true
		}
	}
	tests := []struct {
		name        string
		status      int
		code        string
		unavailable bool
	}{
		{"503", 503, "internal", true},
		{"502 without retries", 502, "internal", true},
		{"500", 500, "internal", true},
		{"400 is a bad request", 400, "invalid_search_filter", false},
		{"401 is a configuration error", 401, "invalid_api_key", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeMeili(t)
			e := f.engine(Options{})
			f.Intercept = answer(tt.status, tt.code)
			_, err := e.SearchEvents(t.Context(), search.EventQuery{Limit: 1, Statuses: []string{"publish"}})
			if err == nil || errors.Is(err, search.ErrUnavailable) != tt.unavailable {
				t.Errorf("SearchEvents = %v, want unavailable %v", err, tt.unavailable)
			}
			if err := e.Init(t.Context()); err == nil || errors.Is(err, search.ErrUnavailable) != tt.unavailable {
				t.Errorf("Init = %v, want unavailable %v", err, tt.unavailable)
			}
			if got := len(f.Calls(http.MethodPost, "/indexes/calendar_events/search")); got != 1 {
				t.Errorf("%d search requests: the engine must not retry", got)
			}
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		f := newFakeMeili(t)
		e := f.engine(Options{})
		url := f.srv.URL
		f.srv.Close()
		for name, err := range map[string]error{
			"Ping":         e.Ping(t.Context()),
			"Init":         e.Init(t.Context()),
			"IndexEvents":  e.IndexEvents(t.Context(), []search.EventDocument{{ID: 1}}),
			"DeleteEvents": e.DeleteEvents(t.Context(), []int64{1}),
		} {
			if !errors.Is(err, search.ErrUnavailable) {
				t.Errorf("%s = %v, want ErrUnavailable", name, err)
			}
		}
		if _, err := e.SearchPlaces(t.Context(), search.PlaceQuery{Kind: search.Venues, Limit: 1}); !errors.Is(err, search.ErrUnavailable) {
			t.Errorf("SearchPlaces = %v, want ErrUnavailable", err)
		}
		if _, err := e.CountEvents(t.Context()); !errors.Is(err, search.ErrUnavailable) {
			t.Errorf("CountEvents = %v, want ErrUnavailable", err)
		}
		if _, err := Open(t.Context(), url, "", Options{}); !errors.Is(err, search.ErrUnavailable) {
			t.Errorf("Open = %v, want ErrUnavailable", err)
		}
	})

	t.Run("task never finishes", func(t *testing.T) {
		f := newFakeMeili(t)
		e := f.engine(Options{TaskTimeout: 30 * time.Millisecond})
		f.Stuck = true
		err := e.DeleteEvents(t.Context(), []int64{1})
		if !errors.Is(err, search.ErrUnavailable) || !strings.Contains(err.Error(), "not finished after 30ms") {
			t.Errorf("DeleteEvents = %v, want ErrUnavailable after the task timeout", err)
		}
	})

	t.Run("canceled context", func(t *testing.T) {
		f := newFakeMeili(t)
		e := f.engine(Options{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := e.SearchEvents(ctx, search.EventQuery{Limit: 1}); !errors.Is(err, context.Canceled) {
			t.Errorf("SearchEvents = %v, want context.Canceled reachable", err)
		}
	})

	t.Run("health not available", func(t *testing.T) {
		f := newFakeMeili(t)
		f.Intercept = func(r *http.Request) (int, any, bool) { return 200, map[string]any{"status": "starting"}, true }
		if _, err := Open(t.Context(), f.srv.URL, "", Options{}); !errors.Is(err, search.ErrUnavailable) {
			t.Errorf("Open = %v, want ErrUnavailable", err)
		}
	})
}

// TestCountAndPing runs against the fake and a real server.
func TestCountAndPing(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	e := tg.engine(t, tg.master, Options{})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.IndexEvents(t.Context(), []search.EventDocument{{ID: 4, Status: "publish"}, {ID: 5, Status: "draft"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.CountEvents(t.Context()); err != nil || n != 2 {
		t.Errorf("CountEvents = %d, %v; want 2 (both event indexes)", n, err)
	}
	err := e.IndexPlaces(t.Context(), []search.PlaceDocument{{ID: 1, Kind: search.Venues}, {ID: 2, Kind: search.Venues}, {ID: 3, Kind: search.Organizers}})
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[search.PlaceKind]int{search.Venues: 2, search.Organizers: 1} {
		if n, err := e.CountPlaces(t.Context(), kind); err != nil || n != want {
			t.Errorf("CountPlaces(%s) = %d, %v; want %d", kind, n, err, want)
		}
	}
	if err := e.DeletePlaces(t.Context(), search.Venues, []int64{1, 3}); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.CountPlaces(t.Context(), search.Organizers); n != 1 {
		t.Errorf("deleting through the venue index removed an organizer")
	}
	if err := e.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if _, err := e.CountPlaces(t.Context(), "theatre"); err == nil {
		t.Errorf("CountPlaces of an unknown kind succeeded")
	}
}

// TestRebuildHelpers: an index prepared under another name gets the same
// settings, the swap and the deletion are awaited.
func TestRebuildHelpers(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.initialisedEngine(Options{Languages: testLangs})
	next, err := e.WithPrefix("calendar_next_")
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Init(t.Context()); err != nil {
		t.Fatalf("Init of the new generation: %v", err)
	}
	for uid, want := range map[string]map[string]any{
		"calendar_next_events": wantEventSettings, "calendar_next_venues": wantVenueSettings, "calendar_next_organizers": wantOrganizerSettings,
	} {
		got := f.Calls(http.MethodPatch, "/indexes/"+uid+"/settings")
		if len(got) != 1 || !reflect.DeepEqual(got[0].Body, meilisim.JSONValue(want)) {
			t.Errorf("%s settings = %s", uid, meilisim.JSONString(got))
		}
	}
	if err := next.IndexEvents(t.Context(), []search.EventDocument{{ID: 7, Status: "publish"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.EnsureIndex(t.Context(), "calendar_events_tmp", EventIndex); err != nil {
		t.Fatalf("EnsureIndex: %v", err)
	}
	got := f.Calls(http.MethodPatch, "/indexes/calendar_events_tmp/settings")
	if len(got) != 1 || !reflect.DeepEqual(got[0].Body, meilisim.JSONValue(wantEventSettings)) {
		t.Errorf("calendar_events_tmp settings = %s", meilisim.JSONString(got))
	}

	f.Reset()
	if err := e.SwapIndexes(t.Context(), e.IndexUID(EventHiddenIndex), next.IndexUID(EventHiddenIndex)); err != nil {
		t.Fatalf("SwapIndexes: %v", err)
	}
	swaps := f.Calls(http.MethodPost, "/swap-indexes")
	if want := meilisim.JSONValue([]any{map[string]any{"indexes": []string{"calendar_events_hidden", "calendar_next_events_hidden"}, "rename": false}}); len(swaps) != 1 || !reflect.DeepEqual(swaps[0].Body, want) {
		t.Errorf("swap request = %s, want %s", meilisim.JSONString(swaps), meilisim.JSONString(want))
	}
	if polls := f.Calls(http.MethodGet, "/tasks/*"); len(polls) == 0 {
		t.Errorf("the swap was not awaited")
	}
	if n, err := e.CountEvents(t.Context()); err != nil || n != 1 {
		t.Errorf("CountEvents after the swap = %d, %v; want the new generation's 1", n, err)
	}
	if err := e.SwapIndexes(t.Context(), "calendar_events", "missing"); err == nil || !strings.Contains(err.Error(), "index_not_found") {
		t.Errorf("swap with a missing index = %v", err)
	}

	if err := e.DeleteIndex(t.Context(), next.IndexUID(EventIndex)); err != nil {
		t.Fatalf("DeleteIndex: %v", err)
	}
	if err := e.DeleteIndex(t.Context(), next.IndexUID(EventIndex)); err != nil {
		t.Errorf("DeleteIndex of a missing index: %v", err)
	}
	if f.Index("calendar_next_events") != nil {
		t.Errorf("calendar_next_events still exists")
	}
	if err := next.Close(); err != nil {
		t.Errorf("Close of the derived engine: %v", err)
	}
	if err := e.Ping(t.Context()); err != nil {
		t.Errorf("closing the derived engine closed the parent: %v", err)
	}
	if _, err := e.WithPrefix("bad prefix"); err == nil {
		t.Errorf("WithPrefix accepted a space")
	}
}

func TestOpenValidatesOptions(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	if _, err := Open(t.Context(), "", "", Options{}); err == nil {
		t.Errorf("Open with no URL succeeded")
	}
	if _, err := Open(t.Context(), f.srv.URL, "", Options{IndexPrefix: "cal/"}); err == nil {
		t.Errorf("Open with a bad prefix succeeded")
	}
	e, err := Open(t.Context(), f.srv.URL, "", Options{IndexPrefix: "site-2_"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := e.IndexUID(VenueIndex); got != "site-2_venues" {
		t.Errorf("IndexUID = %q", got)
	}
	if got := f.Calls(http.MethodGet, "/health"); len(got) != 1 || got[0].Auth != "" {
		t.Errorf("health checks = %v (no key: no Authorization header)", got)
	}
}
