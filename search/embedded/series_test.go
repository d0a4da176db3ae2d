package embedded

import (
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestSeriesStoredPerOccurrence checks what Bleve keeps on disk: each
// occurrence under its own key, and the occurrences a write drops deleted
// from the store too, so that reopening (which loads the stored documents)
// gives back exactly the last write's documents.
func TestSeriesStoredPerOccurrence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := small()
	series, single := f.Events[0], f.Events[1]
	e := mustOpen(t, dir)
	write := func(docs ...search.EventDocument) {
		t.Helper()
		if err := e.IndexEvents(t.Context(), docs); err != nil {
			t.Fatalf("IndexEvents: %v", err)
		}
	}
	write(append(searchtest.Occurrences(series, 6, 7*86400), single)...)
	write(searchtest.Occurrences(series, 2, 7*86400)...) // four occurrences go
	// The single event becomes a series, one occurrence with its own
	// title: the others are stored with a reference to the first's text.
	third := searchtest.Occurrences(single, 3, 86400)
	third[1].Text = map[string]search.Text{"en": {Title: "Zeppelin matinee"}}
	write(third...)
	want := append(searchtest.Occurrences(series, 2, 7*86400), third...)
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	e = mustOpen(t, dir)
	if n, err := e.CountEvents(t.Context()); err != nil || n != len(want) {
		t.Fatalf("CountEvents after reopening = %d, %v; want %d", n, err, len(want))
	}
	q := search.EventQuery{Limit: 100}
	got, err := e.SearchEvents(t.Context(), q)
	exp := searchtest.ExpectedEvents(want, q)
	if err != nil || !slices.Equal(got.IDs, exp.IDs) || !slices.Equal(got.Occurrences, exp.Occurrences) {
		t.Fatalf("after reopening: %v %v, %v; want %v %v", got.IDs, got.Occurrences, err, exp.IDs, exp.Occurrences)
	}
	// Text search after reopening: the occurrences stored with a
	// reference to another's text have it again.
	for _, q := range []search.EventQuery{
		{Lang: "en", Query: searchtest.TextWords(single.Text["en"].Title)[0], IDs: []int64{single.ID}, Limit: 100},
		{Lang: "en", Query: "zeppelin", Limit: 100},
		{Lang: "en", Query: searchtest.TextWords(series.Text["en"].Title)[0], IDs: []int64{series.ID}, Limit: 100},
	} {
		got, err := e.SearchEvents(t.Context(), q)
		exp := searchtest.ExpectedEvents(want, q)
		if err != nil || !slices.Equal(got.IDs, exp.IDs) || exp.Total == 0 || got.Occurrence(0) != exp.Occurrence(0) {
			t.Errorf("search %q after reopening: %v %v, %v; want %v %v", q.Query, got.IDs, got.Occurrences, err, exp.IDs, exp.Occurrences)
		}
	}
	if err := e.DeleteEvents(t.Context(), []int64{series.ID}); err != nil {
		t.Fatalf("DeleteEvents: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e = mustOpen(t, dir)
	defer e.Close()
	if n, err := e.CountEvents(t.Context()); err != nil || n != 3 {
		t.Fatalf("CountEvents after deleting the series and reopening = %d, %v; want 3", n, err)
	}
}
