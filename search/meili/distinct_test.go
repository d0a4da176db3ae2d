package meili

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
	"github.com/calendar/eventcal/search/searchtest"
)

// post sends a JSON body to the fake and decodes its answer.
func (f *fakeMeili) post(t *testing.T, path string, body any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(f.srv.URL+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFakeDistinctAsMeilisearch pins the fake's distinct to what
// Meilisearch's source does (see emulateDistinct): the hit kept for a
// value is the first in the sort order; totalHits with page/hitsPerPage
// counts the values (execute_search applies apply_distinct_rule to every
// candidate when the count is exhaustive); facetDistribution counts the
// document of each value that apply_distinct_rule keeps, the one with the
// smallest INTERNAL document ID, which need not be the hit listed; and a
// distinct attribute must be filterable.
func TestFakeDistinctAsMeilisearch(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	f.Emulate = true
	f.AddIndex("ev", map[string]any{
		"filterableAttributes": []any{"id", "venue_ids", "start"},
		"sortableAttributes":   []any{"start", "id", "occurrence"},
	})
	f.Mu.Lock()
	f.Indexes["ev"].PrimaryKey = "key"
	f.Mu.Unlock()
	// Series 5's LAST occurrence is written first: it gets the smallest
	// internal ID, and it is the one at venue 2.
	docs := []map[string]any{
		{"key": "5-c", "id": 5, "occurrence": "c", "start": 30, "venue_ids": []any{2}},
		{"key": "5-a", "id": 5, "occurrence": "a", "start": 10, "venue_ids": []any{1}},
		{"key": "5-b", "id": 5, "occurrence": "b", "start": 20, "venue_ids": []any{1}},
		{"key": "6", "id": 6, "start": 15, "venue_ids": []any{1}},
		{"key": "7-a", "id": 7, "occurrence": "a", "start": 5, "venue_ids": []any{3}},
	}
	task := f.post(t, "/indexes/ev/documents?primaryKey=key", docs)
	// The fake, as Meilisearch, indexes in a task of its own: wait for it
	// (under the race detector the first search came before it).
	testdeadline.Poll(t, 5*time.Millisecond, "the documents' task", func() bool {
		resp, err := http.Get(fmt.Sprintf("%s/tasks/%v", f.srv.URL, task["taskUid"]))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st map[string]any
		if json.NewDecoder(resp.Body).Decode(&st) != nil {
			return false
		}
		if st["status"] == "failed" {
			t.Fatalf("the documents' task failed: %v", st["error"])
		}
		return st["status"] == "succeeded"
	})
	sort := []any{"start:asc", "id:asc", "occurrence:asc"}
	keys := func(answer map[string]any) []string {
		var out []string
		hits, _ := answer["hits"].([]any)
		for _, h := range hits {
			out = append(out, h.(map[string]any)["key"].(string))
		}
		return out
	}
	tests := []struct {
		name      string
		body      map[string]any
		wantKeys  []string
		wantTotal float64
		wantVenue map[string]any
	}{
		{"no distinct: every document", map[string]any{"sort": sort, "page": 1, "hitsPerPage": 10, "facets": []any{"venue_ids"}},
			[]string{"7-a", "5-a", "6", "5-b", "5-c"}, 5, map[string]any{"1": 3.0, "2": 1.0, "3": 1.0}},
		{"distinct: first of each id in the sort order, exact total", map[string]any{"sort": sort, "page": 1, "hitsPerPage": 10, "distinct": "id", "facets": []any{"venue_ids"}},
			// Facets: series 5 counts by 5-c (smallest internal ID), at venue 2.
			[]string{"7-a", "5-a", "6"}, 3, map[string]any{"1": 1.0, "2": 1.0, "3": 1.0}},
		{"distinct, second page", map[string]any{"sort": sort, "page": 2, "hitsPerPage": 2, "distinct": "id"},
			[]string{"6"}, 3, nil},
		{"distinct with a filter that leaves series 5's later occurrences", map[string]any{"sort": sort, "page": 1, "hitsPerPage": 10, "distinct": "id", "filter": "start >= 12"},
			[]string{"6", "5-b"}, 2, nil},
		{"distinct, total only", map[string]any{"sort": sort, "page": 1, "hitsPerPage": 0, "distinct": "id"},
			nil, 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.post(t, "/indexes/ev/search", tt.body)
			if k := keys(got); !slices.Equal(k, tt.wantKeys) || got["totalHits"] != tt.wantTotal {
				t.Errorf("hits %v total %v; want %v total %v", k, got["totalHits"], tt.wantKeys, tt.wantTotal)
			}
			if tt.wantVenue != nil {
				if venue := got["facetDistribution"].(map[string]any)["venue_ids"]; !reflect.DeepEqual(venue, tt.wantVenue) {
					t.Errorf("venue facet %v, want %v", venue, tt.wantVenue)
				}
			}
		})
	}
	if got := f.post(t, "/indexes/ev/search", map[string]any{"distinct": "occurrence"}); got["code"] != "invalid_search_distinct" {
		t.Errorf("distinct on an attribute that is not filterable: %v", got)
	}
}

// TestSeriesWritesAndCollapsedSearches pins the engine's requests for
// recurring events: in each event index, a write adds the events' new
// documents FIRST, then deletes by filter those of other writes (id IN
// [...] AND gen != G: the occurrences the edit removed), so that a listed
// occurrence is replaced in place, never missing (hidden.go);
// a collapsed list asks with distinct id, and its facets in a second
// request without distinct, so that they count every occurrence.
func TestSeriesWritesAndCollapsedSearches(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	f.Emulate = true
	e := f.engine(Options{Languages: testLangs})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	base := search.EventDocument{ID: 40, Status: "publish", Start: 1000, End: 2000, StartLocal: 1000, EndLocal: 2000,
		VenueIDs: []int64{1}, CategoryIDs: []int64{}, TagIDs: []int64{}, OrganizerIDs: []int64{},
		Text: map[string]search.Text{"en": {Title: "Weekly class"}}}
	occs := searchtest.Occurrences(base, 4, 7*86400)
	occs[0].VenueIDs = []int64{2} // an override of the first occurrence
	if err := e.IndexEvents(t.Context(), occs); err != nil {
		t.Fatal(err)
	}

	f.Reset()
	if err := e.IndexEvents(t.Context(), occs[:2]); err != nil { // two occurrences fewer
		t.Fatal(err)
	}
	var order []string
	for _, r := range f.Calls("", "*") {
		switch {
		case strings.HasPrefix(r.Path, "/tasks/"):
			if order[len(order)-1] != "wait" {
				order = append(order, "wait")
			}
		case r.Method == http.MethodPost:
			order = append(order, r.Path)
		}
	}
	want := []string{
		"/indexes/calendar_events_hidden/documents", "wait", "/indexes/calendar_events/documents", "wait",
		"/indexes/calendar_events_hidden/documents/delete", "wait", "/indexes/calendar_events/documents/delete", "wait",
	}
	if !slices.Equal(order, want) {
		t.Errorf("requests %q, want %q", order, want)
	}
	gen := f.Calls(http.MethodPost, "/indexes/calendar_events/documents")[0].Body.([]any)[0].(map[string]any)["gen"]
	if del := f.Calls(http.MethodPost, "/indexes/calendar_events/documents/delete"); len(del) != 1 ||
		!reflect.DeepEqual(del[0].Body, map[string]any{"filter": fmt.Sprintf("id IN [40] AND gen != %.0f", gen)}) {
		t.Errorf("deletion %v, want the filter id IN [40] AND gen != %.0f", del, gen)
	}
	if n, err := e.CountEvents(t.Context()); err != nil || n != 2 {
		t.Errorf("CountEvents = %d, %v; want 2", n, err)
	}

	f.Reset()
	q := search.EventQuery{Lang: "en", Statuses: []string{"publish"}, CollapseSeries: true, Facets: []string{search.FacetVenue}, Limit: 10}
	r, err := e.SearchEvents(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 1 || !slices.Equal(r.IDs, []int64{40}) || r.Occurrence(0) != occs[0].Occurrence {
		t.Errorf("collapsed = %+v, want series 40 once, by its first occurrence", r)
	}
	if want := map[string]int{"1": 1, "2": 1}; !reflect.DeepEqual(r.Facets[search.FacetVenue], want) {
		t.Errorf("venue facet %v, want %v (every occurrence)", r.Facets[search.FacetVenue], want)
	}
	searches := f.Calls(http.MethodPost, "/indexes/calendar_events/search")
	if len(searches) != 2 {
		t.Fatalf("%d searches, want 2", len(searches))
	}
	list, facets := searches[0].Body.(map[string]any), searches[1].Body.(map[string]any)
	if list["distinct"] != "id" || list["facets"] != nil || facets["distinct"] != nil || facets["hitsPerPage"] != 0.0 || facets["facets"] == nil {
		t.Errorf("list request %s\nfacets request %s", meilisim.JSONString(list), meilisim.JSONString(facets))
	}
}
