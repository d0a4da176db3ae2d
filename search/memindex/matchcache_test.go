package memindex

import (
	"fmt"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestMatchCacheKeepsOneVersion runs typeahead queries (growing
// prefixes, two words, a typo, with a category, other statuses) twice
// and checks that the second run takes each word's rows from the match
// cache and that every answer is the reference's (a query whose first
// word's rows are the cache's, narrowed by the next word or a filter,
// leaves them as they were); then writes events and checks that the
// next queries find the new ones (a write empties the cache).
func TestMatchCacheKeepsOneVersion(t *testing.T) {
	const now = int64(1_800_000_000)
	var docs []search.EventDocument
	for i := range 3000 {
		start := now + int64(i%500)*3600
		docs = append(docs, search.EventDocument{ID: int64(i + 1), Status: []string{"publish", "draft"}[i%7/6], Start: start, End: start + 3600,
			CategoryIDs: []int64{int64(i % 5)}, Text: map[string]search.Text{"en": {Title: fmt.Sprintf("%s %s %d", benchWords[i%20], benchWords[i%7], i)}}})
	}
	x := New()
	x.Apply(docs)
	queries := func() []search.EventQuery {
		var qs []search.EventQuery
		for _, text := range []string{"j", "ja", "jaz", "jazz", "jazz c", "jazz co", "jazz cnocert ", "c", "co"} {
			q := search.EventQuery{Lang: "en", Query: text, Statuses: []string{"publish"}, ExcludeHidden: true, StartGTE: search.Some(now), Limit: 8}
			qs = append(qs, q)
			q.CategoryIDs = []int64{2}
			qs = append(qs, q)
			q.CategoryIDs, q.Statuses = nil, []string{"publish", "draft"}
			qs = append(qs, q)
		}
		return qs
	}
	check := func(round string) {
		t.Helper()
		for _, q := range queries() {
			got, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			want := searchtest.ExpectedEvents(docs, q)
			if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
				t.Fatalf("%s, %q (categories %v, statuses %v): total %d, %v; want %d, %v", round, q.Query, q.CategoryIDs, q.Statuses,
					got.Total, got.IDs, want.Total, want.IDs)
			}
		}
	}
	check("first")
	hits := x.matches.hits
	check("again")
	if x.matches.hits == hits {
		t.Error("the same queries again took no word's rows from the cache")
	}
	for i := range 50 {
		start := now + int64(i)*3600
		docs = append(docs, search.EventDocument{ID: int64(10000 + i), Status: "publish", Start: start, End: start + 60,
			CategoryIDs: []int64{2}, Text: map[string]search.Text{"en": {Title: "jazz concert, new"}}})
	}
	x.Apply(docs[len(docs)-50:])
	check("after a write")
}
