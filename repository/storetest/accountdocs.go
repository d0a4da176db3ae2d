package storetest

import (
	"context"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// accountDocumentTests check AccountDocuments: the sum of the Documents of
// an author's events, kept in step with every write.
var accountDocumentTests = []storeTest{
	{"FollowsWrites", testAccountDocumentsFollowWrites},
}

// accountDocuments calls AccountDocuments and fails the test on an error.
func accountDocuments(t *testing.T, ctx context.Context, s repository.Store, author int64) int {
	t.Helper()
	n, err := s.AccountDocuments(ctx, author)
	if err != nil {
		t.Fatalf("AccountDocuments(%d): %v", author, err)
	}
	return n
}

// testAccountDocumentsFollowWrites: every status counts, 0 counts as 1,
// venues count nothing; updates, a change of author and deletes move the
// sums; other authors are untouched.
func testAccountDocumentsFollowWrites(t *testing.T, ctx context.Context, s repository.Store) {
	if n := accountDocuments(t, ctx, s, 41); n != 0 {
		t.Fatalf("empty store: %d", n)
	}
	mk := func(author int64, status string, docs int) *repository.Record {
		p := eventFixture("Account " + status)
		p.Author, p.Status, p.Event.Documents = author, status, docs
		if err := s.CreateRecord(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	series := mk(41, repository.StatusDraft, 726)
	mk(41, repository.StatusTrash, 10)
	single := mk(41, repository.StatusPublish, 0) // written before Documents existed: one
	mk(42, repository.StatusDraft, 500)
	venue := &repository.Record{Kind: repository.KindVenue, Author: 41, Status: repository.StatusPublish, Title: repository.Text{"en": "Hall"}, Venue: &repository.VenueFields{}}
	if err := s.CreateRecord(ctx, venue); err != nil {
		t.Fatal(err)
	}
	check := func(what string, want41, want42 int) {
		t.Helper()
		if got := accountDocuments(t, ctx, s, 41); got != want41 {
			t.Errorf("%s: author 41 has %d documents, want %d", what, got, want41)
		}
		if got := accountDocuments(t, ctx, s, 42); got != want42 {
			t.Errorf("%s: author 42 has %d documents, want %d", what, got, want42)
		}
	}
	check("created", 726+10+1, 500)
	if _, err := s.UpdateRecord(ctx, series.ID, func(p *repository.Record) error { p.Event.Documents = 100; return nil }); err != nil {
		t.Fatal(err)
	}
	check("series shrunk", 100+10+1, 500)
	if _, err := s.UpdateRecord(ctx, series.ID, func(p *repository.Record) error { p.Status = repository.StatusPublish; return nil }); err != nil {
		t.Fatal(err)
	}
	check("status changed", 100+10+1, 500)
	if _, err := s.UpdateRecord(ctx, series.ID, func(p *repository.Record) error { p.Author = 42; return nil }); err != nil {
		t.Fatal(err)
	}
	check("author changed", 10+1, 600)
	if err := s.DeleteRecord(ctx, single.ID); err != nil {
		t.Fatal(err)
	}
	check("single deleted", 10, 600)
	if err := s.DeleteRecord(ctx, series.ID); err != nil {
		t.Fatal(err)
	}
	check("series deleted", 10, 500)
}
