package meili

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestHyphensAgainstSimulator runs the hyphenated-word cases
// (searchtest.RunHyphens: "night" and "late-night" find "Late-night Comedy
// Club", "e-bike" finds "E-bike tour", dates and phone numbers by their
// parts) on the simulator in each supported version, events and places.
func TestHyphensAgainstSimulator(t *testing.T) {
	t.Parallel()
	for _, version := range simVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			f := newEmulatingSim(t, version)
			var n atomic.Int64
			searchtest.RunHyphens(t, func(t *testing.T) search.Engine {
				return f.engine(Options{Languages: testLangs, IndexPrefix: fmt.Sprintf("hyphen_%d_", n.Add(1))})
			})
		})
	}
}

// TestHyphenUpgrade: indexes written by a release that kept '-' inside
// words (nonSeparatorTokens ["-"]) do not find "Late-night Comedy Club" by
// "night"; the first Init of this release resets the setting (Meilisearch
// then re-indexes every document, as the simulator models by cutting words
// with the index's current separators), without a rebuild, and the same
// documents are found by each part and by the whole.
func TestHyphenUpgrade(t *testing.T) {
	t.Parallel()
	for _, version := range simVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			f := newEmulatingSim(t, version)
			opts := Options{Languages: testLangs, DefaultLanguage: "en"}
			if err := f.engine(opts).Init(t.Context()); err != nil {
				t.Fatal(err)
			}
			docs := []search.EventDocument{
				{ID: 1, Status: "publish", Start: 1000, Text: map[string]search.Text{"en": {Title: "Late-night Comedy Club"}}},
				{ID: 2, Status: "publish", Start: 2000, Text: map[string]search.Text{"en": {Title: "E-bike tour"}}},
			}
			if err := f.engine(opts).IndexEvents(t.Context(), docs); err != nil {
				t.Fatal(err)
			}
			venue := []search.PlaceDocument{{ID: 3, Kind: search.Venues, Status: "publish", PublishDate: 10,
				Text: map[string]search.Text{"en": {Title: "Open-air stage"}}}}
			if err := f.engine(opts).IndexPlaces(t.Context(), venue); err != nil {
				t.Fatal(err)
			}
			// The older release's setting, on every index.
			f.Mu.Lock()
			for uid, ix := range f.Indexes {
				if uid != "calendar_meta" {
					ix.Settings["nonSeparatorTokens"] = []any{"-"}
					ix.Writes++
				}
			}
			f.Mu.Unlock()
			find := func(e *Engine, query string) []int64 {
				t.Helper()
				r, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Query: query, Statuses: []string{"publish"}, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				return r.IDs
			}
			findVenue := func(e *Engine, query string) []int64 {
				t.Helper()
				r, err := e.SearchPlaces(t.Context(), search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: query, Statuses: []string{"publish"}, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				return r.IDs
			}
			old := f.engine(opts)
			if got := find(old, "night"); len(got) != 0 {
				t.Fatalf("before the upgrade, night = %v: the simulator ignores nonSeparatorTokens", got)
			}
			if got := findVenue(old, "air"); len(got) != 0 {
				t.Fatalf("before the upgrade, venue air = %v", got)
			}

			f.Reset()
			e := f.engine(opts)
			if err := e.Init(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, ix := range indexes {
				uid := e.IndexUID(ix)
				if got := f.Calls("DELETE", "/indexes/"+uid+"/settings/non-separator-tokens"); len(got) != 1 {
					t.Errorf("%s: %d resets of nonSeparatorTokens, want 1", uid, len(got))
				}
			}
			if o, _ := e.Outdated(t.Context()); o {
				t.Error("the upgrade asks for a rebuild; the settings reset suffices")
			}
			for _, tc := range []struct {
				query string
				want  []int64
			}{
				{"night", []int64{1}},
				{"late-night", []int64{1}},
				{"late-nig", []int64{1}},
				{"e-bike", []int64{2}},
				{"bike ", []int64{2}},
			} {
				if got := find(e, tc.query); !slices.Equal(got, tc.want) {
					t.Errorf("after the upgrade, %q = %v, want %v", tc.query, got, tc.want)
				}
			}
			if got := findVenue(e, "air"); !slices.Equal(got, []int64{3}) {
				t.Errorf("after the upgrade, venue air = %v, want [3]", got)
			}
		})
	}
}
