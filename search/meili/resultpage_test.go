package meili

import (
	"reflect"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestResultPage: the page of merged hits keeps the total given, cuts
// from offset to at most limit hits, and lists occurrences only when a
// hit of the page has one ("" for the single events before it).
func TestResultPage(t *testing.T) {
	t.Parallel()
	hits := []collapsedHit{{id: 1}, {id: 2}, {id: 3, occ: "20270101"}, {id: 3, occ: "20270108"}, {id: 4}}
	cases := []struct {
		name                 string
		offset, limit, total int
		want                 search.Result
	}{
		{"first page of single events", 0, 2, 9, search.Result{Total: 9, IDs: []int64{1, 2}}},
		{"an occurrence after single events", 1, 3, 5, search.Result{Total: 5, IDs: []int64{2, 3, 3}, Occurrences: []string{"", "20270101", "20270108"}}},
		{"an occurrence first", 2, 10, 5, search.Result{Total: 5, IDs: []int64{3, 3, 4}, Occurrences: []string{"20270101", "20270108", ""}}},
		{"past the end", 7, 10, 5, search.Result{Total: 5, IDs: []int64{}}},
		{"no hits asked", 0, 0, 5, search.Result{Total: 5, IDs: []int64{}}},
	}
	for _, c := range cases {
		if got := resultPage(hits, c.offset, c.limit, c.total); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
