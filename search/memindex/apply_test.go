package memindex

import (
	"fmt"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestRemoveNamesAnIDTwice: Remove with an ID named more than once (a
// caller that gathers deletions from several sources may repeat one)
// removes the event once, as if named once, rather than unlinking its
// slots twice (it panicked), and the index then answers as the reference
// does over the events left, facets included.
func TestRemoveNamesAnIDTwice(t *testing.T) {
	t.Parallel()
	two := []search.EventDocument{
		{ID: 1, Status: "publish", Start: 100, End: 200, Text: map[string]search.Text{"en": {Title: "jazz night"}}},
		{ID: 2, Status: "publish", Start: 100, End: 200, Text: map[string]search.Text{"en": {Title: "rock night"}}},
	}
	f := searchtest.Generate(23, 200, 10, 6)
	cases := []struct {
		name string
		docs []search.EventDocument
		ids  func(ids []int64) []int64
	}{
		{"the first of two twice", two, func(ids []int64) []int64 { return []int64{ids[0], ids[0]} }},
		{"one event twice", f.Events, func(ids []int64) []int64 { return []int64{ids[0], ids[0]} }},
		{"repeats among others", f.Events, func(ids []int64) []int64 { return []int64{ids[1], ids[2], ids[1], ids[3], ids[2], ids[1]} }},
		{"an absent ID twice", f.Events, func(ids []int64) []int64 { return []int64{1 << 50, ids[4], 1 << 50} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := New()
			x.Apply(tc.docs)
			var ids []int64
			for _, d := range tc.docs {
				if !slices.Contains(ids, d.ID) {
					ids = append(ids, d.ID)
				}
			}
			gone := tc.ids(ids)
			x.Remove(gone)
			var left []search.EventDocument
			for _, d := range tc.docs {
				if !slices.Contains(gone, d.ID) {
					left = append(left, d)
				}
			}
			for _, q := range []search.EventQuery{
				{Limit: 50, Facets: search.EventFacets},
				{Limit: 10, Offset: 10},
				{Limit: 20, IDs: gone},
			} {
				got, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				want := searchtest.ExpectedEvents(left, q)
				wantF := searchtest.ExpectedFacets(left, q)
				if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) || fmt.Sprint(got.Facets) != fmt.Sprint(wantF) {
					t.Fatalf("%+v after Remove(%v): %d %v %v, want %d %v %v", q, gone, got.Total, got.IDs, got.Facets,
						want.Total, want.IDs, wantF)
				}
			}
		})
	}
}
