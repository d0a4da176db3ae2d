package searchtest

import (
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/calendar/eventcal/search"
)

// The reference functions decide every expectation of the suite, so they
// get hand-written cases of their own.

func TestMatchEvent(t *testing.T) {
	paris := search.GeoPoint{Lat: 48.8566, Lng: 2.3522}
	doc := search.EventDocument{
		ID: 7, Status: "publish", Start: 1000, End: 2000, Featured: true, HasGeo: true, Geo: &paris,
		CategoryIDs: []int64{1, 2}, TagIDs: []int64{}, ParentID: 3, HasPassword: true,
		Text: map[string]search.Text{
			"en": {Title: "Open-air JAZZ", Description: "<p>a <strong>night</strong> at the caf&eacute;</p>", Excerpt: "don't miss"},
			"fr": {Title: "Jazz en plein-air"},
		},
	}
	for _, c := range []struct {
		name string
		q    search.EventQuery
		want bool
	}{
		{"nothing set", search.EventQuery{}, true},
		{"start >= on the value", search.EventQuery{StartGTE: search.Some[int64](1000)}, true},
		{"start > on the value", search.EventQuery{StartGT: search.Some[int64](1000)}, false},
		{"start < on the value", search.EventQuery{StartLT: search.Some[int64](1000)}, false},
		{"start < after the value", search.EventQuery{StartLT: search.Some[int64](1001)}, true},
		{"end <= on the value", search.EventQuery{EndLTE: search.Some[int64](2000)}, true},
		{"end < on the value", search.EventQuery{EndLT: search.Some[int64](2000)}, false},
		{"end > on the value", search.EventQuery{EndGT: search.Some[int64](2000)}, false},
		{"end > before the value", search.EventQuery{EndGT: search.Some[int64](1999)}, true},
		{"any category", search.EventQuery{CategoryIDs: []int64{9, 2}}, true},
		{"no category", search.EventQuery{CategoryIDs: []int64{9}}, false},
		{"tag on a doc without tags", search.EventQuery{TagIDs: []int64{1}}, false},
		{"featured false", search.EventQuery{Featured: search.Some(false)}, false},
		{"ticketed false", search.EventQuery{Ticketed: search.Some(false)}, true},
		{"status", search.EventQuery{Statuses: []string{"draft", "publish"}}, true},
		{"other status", search.EventQuery{Statuses: []string{"draft"}}, false},
		{"ids", search.EventQuery{IDs: []int64{8}}, false},
		{"parent", search.EventQuery{ParentID: search.Some[int64](3)}, true},
		{"parent zero", search.EventQuery{ParentID: search.Some[int64](0)}, false},
		{"exclude protected", search.EventQuery{ExcludeProtected: true}, false},
		{"exclude hidden", search.EventQuery{ExcludeHidden: true}, true},
		{"near, on the point", search.EventQuery{Near: search.Some(search.GeoCircle{Center: paris})}, true},
		{"near, far", search.EventQuery{Near: search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: 52.52, Lng: 13.4}, RadiusKm: 500})}, false},
		{"words from two fields", search.EventQuery{Lang: "en", Query: "jazz NIGHT"}, true},
		{"hyphenated word", search.EventQuery{Lang: "en", Query: "open-air"}, true},
		{"each part of a hyphenated word", search.EventQuery{Lang: "en", Query: "air open "}, true},
		{"a part of a hyphenated word", search.EventQuery{Lang: "en", Query: "air "}, true},
		{"hyphenated parts the record lacks", search.EventQuery{Lang: "en", Query: "open-door"}, false},
		{"apostrophe splits", search.EventQuery{Lang: "en", Query: "don t"}, true},
		{"prefix", search.EventQuery{Lang: "en", Query: "jaz"}, true},
		{"whole word", search.EventQuery{Lang: "en", Query: "jaz "}, false},
		{"only the last word is a prefix", search.EventQuery{Lang: "en", Query: "jaz night"}, false},
		{"typo in the last word", search.EventQuery{Lang: "en", Query: "jazz nigth"}, true},
		{"markup is not text", search.EventQuery{Lang: "en", Query: "strong"}, false},
		{"entity decoded and folded", search.EventQuery{Lang: "en", Query: "CAFE"}, true},
		{"eleventh word ignored", search.EventQuery{Lang: "en", Query: "jazz night a at the open-air don t miss cafe zzz"}, true},
		{"other language", search.EventQuery{Lang: "fr", Query: "night"}, false},
		{"missing language", search.EventQuery{Lang: "de", Query: "jazz"}, false},
		{"no words", search.EventQuery{Lang: "de", Query: "?!"}, true},
	} {
		if got := MatchEvent(doc, c.q); got != c.want {
			t.Errorf("%s: MatchEvent = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMatchPlace(t *testing.T) {
	doc := search.PlaceDocument{
		ID: 5, Kind: search.Venues, Status: "publish", HasEvents: true,
		Text:      map[string]search.Text{"en": {Title: "Jazz Club"}},
		Fields:    map[string]string{"address": "100, Avenue du Temple", "city": "Paris"},
		LastStart: map[string]int64{"publish": 500, "draft": 900},
	}
	for _, c := range []struct {
		name string
		q    search.PlaceQuery
		want bool
	}{
		{"kind", search.PlaceQuery{Kind: search.Venues}, true},
		{"other kind", search.PlaceQuery{Kind: search.Organizers}, false},
		{"words in one field", search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: "temple AVENUE"}, true},
		{"words in two fields", search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: "jazz paris"}, false},
		{"title", search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: "club"}, true},
		{"has events", search.PlaceQuery{Kind: search.Venues, HasEvents: search.Some(false)}, false},
		{"upcoming on the value", search.PlaceQuery{Kind: search.Venues, UpcomingAfter: search.Some[int64](500), UpcomingStatuses: []string{"publish"}}, true},
		{"upcoming past the value", search.PlaceQuery{Kind: search.Venues, UpcomingAfter: search.Some[int64](501), UpcomingStatuses: []string{"publish"}}, false},
		{"upcoming other status", search.PlaceQuery{Kind: search.Venues, UpcomingAfter: search.Some[int64](501), UpcomingStatuses: []string{"publish", "draft"}}, true},
		{"upcoming no statuses", search.PlaceQuery{Kind: search.Venues, UpcomingAfter: search.Some[int64](0)}, false},
	} {
		if got := MatchPlace(doc, c.q); got != c.want {
			t.Errorf("%s: MatchPlace = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestExpectedOrderAndPaging(t *testing.T) {
	events := []search.EventDocument{
		{ID: 3, Start: 10, PublishDate: 5}, {ID: 1, Start: 10, PublishDate: 7}, {ID: 2, Start: 5, PublishDate: 7},
	}
	if got := ExpectedEvents(events, search.EventQuery{Limit: 10}); !slices.Equal(got.IDs, []int64{2, 1, 3}) || got.Total != 3 {
		t.Errorf("by start: %+v", got)
	}
	if got := ExpectedEvents(events, search.EventQuery{Sort: search.ByPublishDate, Limit: 10}); !slices.Equal(got.IDs, []int64{3, 1, 2}) {
		t.Errorf("by publish date: %+v", got)
	}
	places := []search.PlaceDocument{{ID: 1, PublishDate: 5}, {ID: 2, PublishDate: 5}, {ID: 3, PublishDate: 1}}
	if got := ExpectedPlaces(places, search.PlaceQuery{Limit: 10}); !slices.Equal(got.IDs, []int64{2, 1, 3}) {
		t.Errorf("places: %+v", got)
	}
	ids := []int64{1, 2, 3, 4, 5}
	for _, c := range []struct {
		offset, limit int
		want          []int64
	}{
		{0, 2, []int64{1, 2}}, {4, 2, []int64{5}}, {5, 2, []int64{}}, {99, 2, []int64{}},
		{0, 0, []int64{}}, {-1, 1, []int64{1}}, {1, -1, []int64{}},
	} {
		if got := Page(ids, c.offset, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("Page(%d, %d) = %v, want %v", c.offset, c.limit, got, c.want)
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(9, 40, 6, 4), Generate(9, 40, 6, 4)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two fixture sets from one seed differ")
	}
	if reflect.DeepEqual(a.Events, Generate(10, 40, 6, 4).Events) {
		t.Fatal("two seeds gave the same events")
	}
}

// TestExpectedEventsAndFacets checks the reference's order on ties (the
// date, then the ID, then the occurrence key, a single event's empty key
// first), collapsed series (the first occurrence of each ID), paging with
// occurrences, and that ExpectedEventsAndFacets is ExpectedEvents and
// ExpectedFacets whatever the order of the documents given.
func TestExpectedEventsAndFacets(t *testing.T) {
	events := []search.EventDocument{
		{ID: 4, Occurrence: "b", Start: 10, PublishDate: 1, Status: "publish", CategoryIDs: []int64{1}},
		{ID: 4, Occurrence: "a", Start: 10, PublishDate: 1, Status: "publish", CategoryIDs: []int64{1}},
		{ID: 2, Start: 10, PublishDate: 3, Status: "draft", CategoryIDs: []int64{2}},
		{ID: 4, Occurrence: "c", Start: 3, PublishDate: 1, Status: "publish", CategoryIDs: []int64{1, 2}},
		{ID: 9, Start: 20, PublishDate: 1, Status: "publish"},
		{ID: 4, Occurrence: "d", Start: 30, PublishDate: 1, Status: "draft", CategoryIDs: []int64{2}},
	}
	facets := []string{search.FacetCategories}
	for _, c := range []struct {
		name     string
		q        search.EventQuery
		ids      []int64
		occs     []string
		total    int
		category map[string]int
	}{
		{"by start", search.EventQuery{Limit: 10}, []int64{4, 2, 4, 4, 9, 4}, []string{"c", "", "a", "b", "", "d"}, 6, nil},
		{"a page", search.EventQuery{Offset: 2, Limit: 2, Facets: facets}, []int64{4, 4}, []string{"a", "b"}, 6,
			map[string]int{"1": 3, "2": 3}},
		{"by publish date", search.EventQuery{Sort: search.ByPublishDate, Limit: 3}, []int64{4, 4, 4}, []string{"a", "b", "c"}, 6, nil},
		{"collapsed", search.EventQuery{CollapseSeries: true, Limit: 10, Facets: facets}, []int64{4, 2, 9}, []string{"c", "", ""}, 3,
			map[string]int{"1": 3, "2": 3}},
		{"collapsed, one status", search.EventQuery{CollapseSeries: true, Statuses: []string{"draft"}, Limit: 10, Facets: facets},
			[]int64{2, 4}, []string{"", "d"}, 2, map[string]int{"2": 2}},
		{"the total only", search.EventQuery{Statuses: []string{"publish"}, Facets: facets}, []int64{}, []string{}, 4,
			map[string]int{"1": 3, "2": 1}},
	} {
		for _, order := range []string{"as given", "reversed", "sorted"} {
			docs := slices.Clone(events)
			switch order {
			case "reversed":
				slices.Reverse(docs)
			case "sorted":
				SortEvents(docs, c.q.Sort)
			}
			got, gotF := ExpectedEventsAndFacets(docs, c.q)
			if !slices.Equal(got.IDs, c.ids) || !slices.Equal(got.Occurrences, c.occs) || got.Total != c.total {
				t.Errorf("%s, %s: %v %q total %d; want %v %q total %d", c.name, order, got.IDs, got.Occurrences, got.Total, c.ids, c.occs, c.total)
			}
			var want map[string]map[string]int
			if c.category != nil {
				want = map[string]map[string]int{search.FacetCategories: c.category}
			}
			if !reflect.DeepEqual(gotF, want) {
				t.Errorf("%s, %s: facets %v, want %v", c.name, order, gotF, want)
			}
			if e, f := ExpectedEvents(docs, c.q), ExpectedFacets(docs, c.q); !reflect.DeepEqual(e, got) || !reflect.DeepEqual(f, gotF) {
				t.Errorf("%s, %s: ExpectedEvents %+v and ExpectedFacets %v differ", c.name, order, e, f)
			}
		}
	}
}

// TestFacetIDs checks the facets the reference counts by ID against
// search.FacetValues, which names each value: for every facet of IDs,
// facetIDs' IDs as text are FacetValues' values, in order, for documents
// with none, one and several IDs (a repeated one included).
func TestFacetIDs(t *testing.T) {
	docs := []search.EventDocument{{}, {CategoryIDs: []int64{3}, TagIDs: []int64{-1, 0}, VenueIDs: []int64{7}, OrganizerIDs: []int64{1 << 40}},
		{CategoryIDs: []int64{2, 2, 9}, TagIDs: []int64{5}, OrganizerIDs: []int64{4, 8}}}
	for _, f := range search.EventFacets {
		ids := facetIDs(f)
		if ids == nil {
			if f != search.FacetFeatured && f != search.FacetTicketed {
				t.Errorf("facet %q: not counted by ID", f)
			}
			continue
		}
		for i := range docs {
			var got []string
			for _, id := range ids(&docs[i]) {
				got = append(got, strconv.FormatInt(id, 10))
			}
			if want := search.FacetValues(docs[i], f); !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Errorf("facet %q of %+v: IDs %v, FacetValues %v", f, docs[i], got, want)
			}
		}
	}
}
