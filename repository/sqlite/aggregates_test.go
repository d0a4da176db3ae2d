package sqlite

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// TestPlaceEventsBackfill opens a database written before place_events
// existed (simulated by dropping it and its triggers) and checks that Open
// fills it from the stored events, and that the triggers are back.
func TestPlaceEventsBackfill(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "calendar.db")
	s := openPath(t, path)
	venue := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish, Venue: &repository.VenueFields{}}
	if err := s.CreateRecord(ctx, venue); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 5, 1, 20, 0, 0, 0, time.UTC)
	event := func(status string, start time.Time) {
		t.Helper()
		e := &repository.Record{Kind: repository.KindEvent, Status: status, Event: &repository.EventFields{
			StartUTC: start, EndUTC: start.Add(time.Hour), Venues: []int64{venue.ID}, Organizers: []int64{}, Categories: []int64{7}}}
		if err := s.CreateRecord(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	event(repository.StatusPublish, start)
	event(repository.StatusDraft, start.Add(time.Hour))
	for _, q := range []string{`DROP TRIGGER event_aggregates_insert`, `DROP TRIGGER event_aggregates_update`,
		`DROP TRIGGER event_aggregates_delete`, `DROP TRIGGER term_counts_insert`, `DROP TRIGGER term_counts_delete`,
		`DROP TABLE place_events`, `DROP TABLE term_events`, `DROP TABLE term_counts`} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	event(repository.StatusTrash, start.Add(2*time.Hour)) // written by the "old" schema
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s = openPath(t, path)
	defer s.Close(ctx)
	event(repository.StatusPending, start.Add(3*time.Hour)) // written by the triggers again
	got, err := s.PlaceEvents(ctx, repository.KindVenue, []int64{venue.ID})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]repository.PlaceEvents{venue.ID: {HasEvents: true, LatestStart: map[string]int64{
		"publish": start.Unix(), "draft": start.Add(time.Hour).Unix(), "trash": start.Add(2 * time.Hour).Unix(), "pending": start.Add(3 * time.Hour).Unix()}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the backfill: got %+v, want %+v", got, want)
	}
	// term_events was filled too: the events written before the reopen count.
	n, err := s.CountRecords(ctx, repository.RecordQuery{Kind: repository.KindEvent, CategoryIDs: []int64{7}})
	if err != nil || n != 4 {
		t.Errorf("events in category 7 after the backfill = %d, %v; want 4", n, err)
	}
	// And term_counts, once (the triggers of the term_events fill and the
	// recount do not add up).
	if got, err := s.LabelCounts(ctx, repository.LabelCategory); err != nil || !reflect.DeepEqual(got, map[int64]int{7: 1}) {
		t.Errorf("TermCounts after the backfill = %v, %v; want 7: 1", got, err)
	}
}

// TestTermCountsBackfillAlone: a database with term_events but without
// term_counts (written by the release before it) gets its counts on open.
func TestTermCountsBackfillAlone(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "calendar.db")
	s := openPath(t, path)
	for _, q := range []string{`DROP TRIGGER term_counts_insert`, `DROP TRIGGER term_counts_delete`, `DROP TABLE term_counts`} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for i, status := range []string{repository.StatusPublish, repository.StatusPublish, repository.StatusDraft} {
		start := time.Date(2031, 1, 1+i, 20, 0, 0, 0, time.UTC)
		e := &repository.Record{Kind: repository.KindEvent, Status: status, Title: map[string]string{"en": "Old " + status},
			Event: &repository.EventFields{StartUTC: start, EndUTC: start.Add(time.Hour), Venues: []int64{}, Organizers: []int64{},
				Categories: []int64{3, 4}, Tags: []int64{9}}}
		if err := s.CreateRecord(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s = openPath(t, path)
	defer s.Close(ctx)
	for tax, want := range map[repository.LabelKind]map[int64]int{repository.LabelCategory: {3: 2, 4: 2}, repository.LabelTag: {9: 2}} {
		if got, err := s.LabelCounts(ctx, tax); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("TermCounts(%s) = %v, %v; want %v", tax, got, err, want)
		}
	}
}

// TestAccountDocumentsBackfill: a database written before account_documents
// existed gets it filled from its events on open (0 counting as 1).
func TestAccountDocumentsBackfill(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "calendar.db")
	s := openPath(t, path)
	for _, q := range []string{`DROP TRIGGER account_documents_insert`, `DROP TRIGGER account_documents_update`,
		`DROP TRIGGER account_documents_delete`, `DROP TABLE account_documents`} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for i, docs := range []int{0, 726, 30} {
		start := time.Date(2031, 1, 1+i, 20, 0, 0, 0, time.UTC)
		e := &repository.Record{Kind: repository.KindEvent, Author: 5, Status: repository.StatusDraft, Title: map[string]string{"en": "Old"},
			Event: &repository.EventFields{StartUTC: start, EndUTC: start.Add(time.Hour), Documents: docs}}
		if err := s.CreateRecord(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s = openPath(t, path)
	defer s.Close(ctx)
	if n, err := s.AccountDocuments(ctx, 5); err != nil || n != 1+726+30 {
		t.Errorf("AccountDocuments(5) = %d, %v; want %d", n, err, 1+726+30)
	}
}
