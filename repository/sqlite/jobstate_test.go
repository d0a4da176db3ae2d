package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// TestJobStateTableAdded: a database written before job_state existed
// gains the table when it is opened, and keeps its data.
func TestJobStateTableAdded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "calendar.db")
	s := openPath(t, path)
	venue := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish, Venue: &repository.VenueFields{City: "Gent"}}
	if err := s.CreateRecord(ctx, venue); err != nil {
		t.Fatal(err)
	}
	if _, err := s.wdb.ExecContext(ctx, `DROP TABLE job_state`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetJobState(ctx, "k"); err == nil {
		t.Fatal("GetJobState without the table succeeded: the test no longer sees an old database")
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s = openPath(t, path)
	defer s.Close(ctx)
	if err := s.SetJobState(ctx, "k", "v"); err != nil {
		t.Fatalf("SetJobState after reopening: %v", err)
	}
	if v, found, err := s.GetJobState(ctx, "k"); err != nil || !found || v != "v" {
		t.Errorf("GetJobState after reopening = %q, %v, %v; want v", v, found, err)
	}
	if p, err := s.GetRecord(ctx, venue.ID); err != nil || p.Venue.City != "Gent" {
		t.Errorf("the venue written before = %+v, %v", p, err)
	}
}
