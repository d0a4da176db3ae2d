package searchtest

import (
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
)

// RunHyphens runs the hyphenated-word cases (testHyphens) on a new engine
// of newEngine: for engines run in several configurations, beside Run.
func RunHyphens(t *testing.T, newEngine func(t *testing.T) search.Engine) {
	testHyphens(t, openEngine(t, newEngine))
}

// testHyphens checks the rule for words joined by hyphens with fixed
// records and the expected IDs written out, not computed by the reference:
// each part and the whole find the record ("night" and "late-night" find
// "Late-night Comedy Club", "e-bike" finds "E-bike tour"), the last part
// of a hyphenated query is a prefix and keeps its typos, every part must
// match, and numbers joined by hyphens (a date, a phone number) are
// numbers: each is found whole and exactly, the date by its parts or
// written whole. Venues and organizers follow the same rule, all words in
// one field.
func testHyphens(t *testing.T, e search.Engine) {
	events := []search.EventDocument{
		{ID: 1, Start: 100, End: 200, Text: en("Late-night Comedy Club", "Stand-up until 2026-12-01")},
		{ID: 2, Start: 300, End: 400, Text: en("E-bike tour", "Call +31-20-555-1234")},
		{ID: 3, Start: 500, End: 600, Text: en("Night market", "Open late")},
		{ID: 4, Start: 700, End: 800, Text: en("Bike repair café", "Every 12th")},
	}
	publishUnlinked(events)
	place := func(id int64, kind search.PlaceKind, title string, fields map[string]string) search.PlaceDocument {
		return search.PlaceDocument{ID: id, Kind: kind, Status: "publish", PublishDate: 1000 - id, Text: en(title, ""), Fields: fields}
	}
	places := []search.PlaceDocument{
		place(11, search.Venues, "Open-air stage", map[string]string{"address": "Boulevard Saint-Michel 1"}),
		place(12, search.Venues, "Michel's hall", map[string]string{"address": "Rue Saint Denis", "phone": "555 1234"}),
		place(21, search.Organizers, "Late-night Comedy Collective", map[string]string{"phone": "+31-20-555-1234"}),
		place(22, search.Organizers, "Night owls", map[string]string{"email": "owls@example.org"}),
	}
	indexAll(t, e, events, places)
	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"night", []int64{1, 3}},
		{"night ", []int64{1, 3}},
		{"late-night", []int64{1, 3}}, // both words, in any order: "Night market … Open late"
		{"Late-Night ", []int64{1, 3}},
		{"late-night comedy", []int64{1}},
		{"late-nig", []int64{1, 3}},    // the last part is a prefix
		{"late-nigth ", []int64{1, 3}}, // and keeps its typo
		{"latenight", nil},             // the parts joined without the hyphen are another word
		{"late-morning", nil},          // every part must match
		{"e-bike", []int64{2}},
		{"E-BIKE tour", []int64{2}},
		{"e-bik", []int64{2}},
		{"bike ", []int64{2, 4}},
		{"ebike", nil},
		{"stand-up", []int64{1}},
		{"up ", []int64{1}},
		// Numbers: a date is its parts, each exact.
		{"2026-12-01", []int64{1}},
		{"2026-12-01 ", []int64{1}},
		{"12 ", []int64{1}},
		{"2026-12-02 ", nil},
		{"20261201", nil},
		{"555-1234", []int64{2}},
		{"+31 20 555 1234 ", []int64{2}},
		{"1234 ", []int64{2}},
		// A lone or leading '-' is no word.
		{"-night", []int64{1, 3}},
	} {
		q := search.EventQuery{Lang: "en", Query: tc.query, Limit: 10}
		if want := ExpectedEvents(events, q); !slices.Equal(want.IDs, tc.want) {
			t.Errorf("events %q: the reference finds %v, the case says %v", tc.query, want.IDs, tc.want)
		}
		r, err := e.SearchEvents(t.Context(), q)
		if err != nil || !slices.Equal(r.IDs, tc.want) || r.Total != len(tc.want) {
			t.Errorf("events %q = %v (total %d, %v), want %v", tc.query, r.IDs, r.Total, err, tc.want)
		}
	}
	for _, tc := range []struct {
		kind  search.PlaceKind
		query string
		want  []int64
	}{
		{search.Venues, "air", []int64{11}},
		{search.Venues, "open-air", []int64{11}},
		{search.Venues, "saint-michel", []int64{11}},
		{search.Venues, "michel ", []int64{11, 12}}, // "Michel's" is "michel" and "s"
		{search.Venues, "saint", []int64{11, 12}},
		{search.Venues, "saint-denis", []int64{12}},
		{search.Venues, "555-1234", []int64{12}}, // the parts in one field
		{search.Organizers, "night", []int64{21, 22}},
		{search.Organizers, "late-night", []int64{21}},
		{search.Organizers, "late-nigth comedy", []int64{21}},
		{search.Organizers, "555-1234", []int64{21}},
		{search.Organizers, "late-night owls", nil},
	} {
		q := search.PlaceQuery{Kind: tc.kind, Lang: "en", Query: tc.query, Limit: 10}
		if want := ExpectedPlaces(places, q); !slices.Equal(want.IDs, tc.want) {
			t.Errorf("%s %q: the reference finds %v, the case says %v", tc.kind, tc.query, want.IDs, tc.want)
		}
		r, err := e.SearchPlaces(t.Context(), q)
		if err != nil || !slices.Equal(r.IDs, tc.want) || r.Total != len(tc.want) {
			t.Errorf("%s %q = %v (total %d, %v), want %v", tc.kind, tc.query, r.IDs, r.Total, err, tc.want)
		}
	}
}
