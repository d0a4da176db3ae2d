package memindex

import (
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestLastOfEach: lastOfEach keeps the last document of each key in their
// order, whether the keys increase (returned as they are) or not.
func TestLastOfEach(t *testing.T) {
	t.Parallel()
	d := func(id int64, occ, status string) search.EventDocument {
		return search.EventDocument{ID: id, Occurrence: occ, Status: status}
	}
	cases := []struct {
		name       string
		docs, want []search.EventDocument
		increasing bool
	}{
		{"none", nil, nil, true},
		{"one", []search.EventDocument{d(1, "", "a")}, []search.EventDocument{d(1, "", "a")}, true},
		{"increasing", []search.EventDocument{d(1, "", "a"), d(2, "k1", "b"), d(2, "k2", "c"), d(3, "", "d")},
			[]search.EventDocument{d(1, "", "a"), d(2, "k1", "b"), d(2, "k2", "c"), d(3, "", "d")}, true},
		{"a repeated single", []search.EventDocument{d(1, "", "a"), d(1, "", "b")}, []search.EventDocument{d(1, "", "b")}, false},
		{"a repeated occurrence", []search.EventDocument{d(2, "k1", "a"), d(2, "k2", "b"), d(2, "k2", "c")},
			[]search.EventDocument{d(2, "k1", "a"), d(2, "k2", "c")}, false},
		{"a repeat apart", []search.EventDocument{d(1, "", "a"), d(2, "", "b"), d(1, "", "c")},
			[]search.EventDocument{d(2, "", "b"), d(1, "", "c")}, false},
		{"decreasing", []search.EventDocument{d(3, "", "a"), d(2, "", "b")}, []search.EventDocument{d(3, "", "a"), d(2, "", "b")}, false},
		{"occurrences decreasing", []search.EventDocument{d(2, "k2", "a"), d(2, "k1", "b")},
			[]search.EventDocument{d(2, "k2", "a"), d(2, "k1", "b")}, false},
	}
	key := func(d search.EventDocument) string { return d.Key() + "/" + d.Status }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := keysIncrease(c.docs); got != c.increasing {
				t.Errorf("keysIncrease = %v, want %v", got, c.increasing)
			}
			got := lastOfEach(c.docs)
			if !slices.Equal(mapKeys(got, key), mapKeys(c.want, key)) {
				t.Errorf("lastOfEach = %v, want %v", mapKeys(got, key), mapKeys(c.want, key))
			}
		})
	}
}

// mapKeys returns f of each document.
func mapKeys(docs []search.EventDocument, f func(search.EventDocument) string) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = f(d)
	}
	return out
}
