package meili

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/search"
)

// inValues counts the values of every IN list in a filter string, skipping
// quoted strings (a value may hold "IN [" or a comma).
func inValues(filter string) (lists []int) {
	for i := 0; i < len(filter); i++ {
		switch c := filter[i]; {
		case c == '"' || c == '\'':
			for i++; i < len(filter) && filter[i] != c; i++ {
				if filter[i] == '\\' {
					i++
				}
			}
		case c == '[' && i >= 3 && filter[i-3:i] == "IN ":
			n, empty := 1, true
			for i++; i < len(filter) && filter[i] != ']'; i++ {
				switch q := filter[i]; {
				case q == '"' || q == '\'':
					empty = false
					for i++; i < len(filter) && filter[i] != q; i++ {
						if filter[i] == '\\' {
							i++
						}
					}
				case q == ',':
					n++
				case q != ' ':
					empty = false
				}
			}
			if empty {
				n = 0
			}
			lists = append(lists, n)
		}
	}
	return lists
}

func TestInValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		filter string
		want   []int
	}{
		{"id = 1", nil},
		{"id IN [1, 2, 3]", []int{3}},
		{`status IN ["a, IN [b", "c\"]"] AND id IN [4]`, []int{2, 1}},
		{"(id IN [1] OR key IN [\"x\", \"y\"])", []int{1, 2}},
	}
	for _, tt := range tests {
		if got := inValues(tt.filter); !slices.Equal(got, tt.want) {
			t.Errorf("inValues(%q) = %v, want %v", tt.filter, got, tt.want)
		}
	}
}

// recordedFilters returns every "filter" string in the bodies of the
// requests the simulator received (searches, multi-searches, deletions by
// filter).
func (f *fakeMeili) recordedFilters() []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "filter" {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, r := range f.Calls("", "*") {
		walk(r.Body)
	}
	return out
}

// TestFilterValuesBounded: no IN list the engine sends holds more than
// maxFilterValues values, however many IDs an operation concerns: lists of
// IDs the engine builds itself are cut into several requests. A caller's lists are bounded by the API
// (limits.MaxListItems) at or below maxFilterValues, so a query with one
// full list is sent as it is.
func TestFilterValuesBounded(t *testing.T) {
	t.Parallel()
	if limits.MaxListItems > maxFilterValues {
		t.Fatalf("the API accepts lists of %d values, more than maxFilterValues (%d)", limits.MaxListItems, maxFilterValues)
	}
	const many = 2*maxFilterValues + 50
	ids := make([]int64, many)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	full := ids[:limits.MaxListItems]
	tests := []struct {
		name string
		run  func(t *testing.T, e *Engine) error
		// requests is the least number of requests the operation must
		// have been cut into.
		requests int
	}{
		{"delete events", func(t *testing.T, e *Engine) error {
			return e.DeleteEvents(t.Context(), ids)
		}, 2 * 3},
		{"index events (stale documents deleted by generation)", func(t *testing.T, e *Engine) error {
			var docs []search.EventDocument
			for _, id := range ids {
				docs = append(docs, search.EventDocument{ID: id, Status: "draft", Text: map[string]search.Text{"en": {Title: fmt.Sprint("again ", id)}}})
			}
			return e.IndexEvents(t.Context(), docs)
		}, 2 * 3},
		{"a caller's full include list", func(t *testing.T, e *Engine) error {
			_, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Statuses: []string{"publish"}, IDs: full, Limit: 10})
			return err
		}, 1},
		{"a caller's full category list", func(t *testing.T, e *Engine) error {
			_, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Statuses: []string{"draft"}, CategoryIDs: full, Limit: 10})
			return err
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeMeili(t)
			f.Emulate = true
			e := f.engine(Options{Languages: testLangs})
			if err := e.Init(t.Context()); err != nil {
				t.Fatal(err)
			}
			var docs []search.EventDocument
			for _, id := range ids {
				docs = append(docs, search.EventDocument{ID: id, Status: []string{"publish", "draft"}[id%2],
					CategoryIDs: []int64{id}, Text: map[string]search.Text{"en": {Title: fmt.Sprint("event ", id)}}})
			}
			if err := e.IndexEvents(t.Context(), docs); err != nil {
				t.Fatal(err)
			}
			f.Reset()
			if err := tt.run(t, e); err != nil {
				t.Fatal(err)
			}
			filters := f.recordedFilters()
			withLists := 0
			for _, filter := range filters {
				lists := inValues(filter)
				for _, n := range lists {
					if n > maxFilterValues {
						t.Errorf("an IN list of %d values (bound %d): %.200s…", n, maxFilterValues, filter)
					}
				}
				if len(lists) > 0 {
					withLists++
				}
			}
			if withLists < tt.requests {
				t.Errorf("%d filters with IN lists, want at least %d; requests %v", withLists, tt.requests, f.Calls(http.MethodPost, "*"))
			}
		})
	}
}
