package mongo

import (
	"errors"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestExplicitIDAfterDeadCreate: a create with an explicit ID that died
// after claiming the ID (an import killed midway) does not block the
// retry; an ID a record holds stays refused.
func TestExplicitIDAfterDeadCreate(t *testing.T) {
	s := leaseStore(t, mongotest.Start(t))
	ctx := t.Context()
	if ok, err := s.claimID(ctx, seqPost, 77); err != nil || !ok {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	p := &repository.Post{ID: 77, Kind: repository.KindOrganizer, Status: "publish", Date: time.Now().UTC(),
		Title: repository.Text{"en": "Imported"}, Slug: repository.Text{"en": "imported"}, Organizer: &repository.OrganizerFields{}}
	if err := s.CreatePost(ctx, p); err != nil {
		t.Fatalf("CreatePost over a dead claim: %v", err)
	}
	again := &repository.Post{ID: 77, Kind: repository.KindOrganizer, Status: "publish", Date: time.Now().UTC(),
		Title: repository.Text{"en": "Other"}, Slug: repository.Text{"en": "other"}, Organizer: &repository.OrganizerFields{}}
	if err := s.CreatePost(ctx, again); !errors.Is(err, repository.ErrDuplicate) {
		t.Fatalf("CreatePost over a record: %v, want ErrDuplicate", err)
	}
	if got, err := s.GetPostBySlug(ctx, repository.KindOrganizer, "en", "other"); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("the refused create left its slug: %v, %v", got, err)
	}
	next := &repository.Post{Kind: repository.KindOrganizer, Status: "publish", Title: repository.Text{"en": "Next"},
		Slug: repository.Text{"en": "next"}, Organizer: &repository.OrganizerFields{}}
	if err := s.CreatePost(ctx, next); err != nil || next.ID <= 77 {
		t.Errorf("next create: ID %d, %v; want past 77", next.ID, err)
	}
}
