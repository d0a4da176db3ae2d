package meili

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestHiddenTextDoesNotReachAnonymousSearch: drafts live in their own
// index, so their words neither lengthen nor crowd an anonymous search.
// 1,100 draft words "ωωω0000" … "ωωω1099" sort before the one published
// word "ωωωz"; in one shared index Meilisearch's prefix "ωωω" would reach
// only the first 1,000 words (all drafts) and miss the published event.
// Runs against the fake (which models the cap) and a real server.
func TestHiddenTextDoesNotReachAnonymousSearch(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	e := tg.engine(t, tg.master, Options{Languages: testLangs})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	var docs []search.EventDocument
	for i := range 1100 {
		docs = append(docs, search.EventDocument{ID: int64(i + 1), Status: "draft",
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("ωωω%04d", i)}}})
	}
	docs = append(docs, search.EventDocument{ID: 5000, Status: "publish", Text: map[string]search.Text{"en": {Title: "ωωωz"}}})
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if tg.fake != nil {
		tg.fake.Reset()
	}
	anon, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Query: "ωωω", Statuses: []string{"publish"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if anon.Total != 1 || !slices.Equal(anon.IDs, []int64{5000}) {
		t.Errorf("anonymous search = %+v, want the published event", anon)
	}
	if tg.fake != nil {
		if got := tg.fake.Calls(http.MethodPost, "*"); len(got) != 1 || got[0].Path != "/indexes/calendar_events/search" {
			t.Errorf("anonymous search requests %+v, want one to the published index", got)
		}
	}
	// An editor's search reads the editor index, which holds every
	// event: the (capped) prefix reaches the first 1,000 words there.
	all, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Query: "ωωω", Statuses: []string{"publish", "draft"}, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != 1000 || len(all.IDs) != 3 {
		t.Errorf("editor search = total %d, %d IDs; want 1000 and a page of 3", all.Total, len(all.IDs))
	}
}

// TestEventIndexes: a published event is written to the published
// index, every event to the editor index, and a status change moves it
// out of (or into) the published index; a search with statuses [publish]
// only reads the published index, any other one the editor index: one
// search request, never a federated one.
func TestEventIndexes(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	e := tg.engine(t, tg.master, Options{Languages: testLangs})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	ev := func(id int64, status string, start int64, tag int64) search.EventDocument {
		return search.EventDocument{ID: id, Status: status, Start: start, End: start, TagIDs: []int64{tag},
			Text: map[string]search.Text{"en": {Title: "jazz"}}}
	}
	if err := e.IndexEvents(t.Context(), []search.EventDocument{
		ev(1, "draft", 10, 7), ev(2, "publish", 20, 7), ev(3, "private", 30, 8), ev(4, "publish", 40, 8), ev(5, "future", 50, 7),
	}); err != nil {
		t.Fatal(err)
	}
	// 1 is published now, 4 is a draft.
	if err := e.IndexEvents(t.Context(), []search.EventDocument{ev(1, "publish", 10, 7), ev(4, "draft", 40, 8)}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.CountEvents(t.Context()); err != nil || n != 5 {
		t.Fatalf("CountEvents = %d, %v; want 5 (every event once in the editor index)", n, err)
	}
	tests := []struct {
		statuses []string
		offset   int
		want     []int64
		total    int
		tags     map[string]int
		index    string
	}{
		{[]string{"publish"}, 0, []int64{1, 2}, 2, map[string]int{"7": 2}, "calendar_events"},
		{[]string{"draft", "private", "future"}, 0, []int64{3, 4}, 3, map[string]int{"7": 1, "8": 2}, "calendar_events_hidden"},
		{[]string{"publish", "draft", "private", "future"}, 0, []int64{1, 2}, 5, map[string]int{"7": 3, "8": 2}, "calendar_events_hidden"},
		{[]string{"publish", "draft", "private", "future"}, 2, []int64{3, 4}, 5, map[string]int{"7": 3, "8": 2}, "calendar_events_hidden"},
		{nil, 4, []int64{5}, 5, map[string]int{"7": 3, "8": 2}, "calendar_events_hidden"},
	}
	for _, tt := range tests {
		if tg.fake != nil {
			tg.fake.Reset()
		}
		q := search.EventQuery{Lang: "en", Query: "jazz", Statuses: tt.statuses, Offset: tt.offset, Limit: 2, Facets: []string{search.FacetTags}}
		r, err := e.SearchEvents(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if r.Total != tt.total || !slices.Equal(r.IDs, tt.want) || !reflect.DeepEqual(r.Facets[search.FacetTags], tt.tags) {
			t.Errorf("statuses %v offset %d = %+v, want total %d IDs %v tags %v", tt.statuses, tt.offset, r, tt.total, tt.want, tt.tags)
		}
		if tg.fake == nil {
			continue
		}
		if got := tg.fake.Calls(http.MethodPost, "*"); len(got) != 1 || got[0].Path != "/indexes/"+tt.index+"/search" {
			t.Errorf("statuses %v: requests %+v, want one search of %s", tt.statuses, got, tt.index)
		}
	}
}
