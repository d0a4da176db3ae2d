package mongo

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestExplicitIDAfterDeadCreate: a create with an explicit ID that died
// after claiming the ID (an import killed midway) does not block the
// retry; an ID a record holds stays refused.
func TestExplicitIDAfterDeadCreate(t *testing.T) {
	t.Parallel()
	s := leaseStore(t, mongotest.Start(t))
	ctx := t.Context()
	if ok, err := s.claimID(ctx, seqPost, 77); err != nil || !ok {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	p := &repository.Record{ID: 77, Kind: repository.KindOrganizer, Status: "publish", Date: time.Now().UTC(),
		Title: repository.Text{"en": "Imported"}, Slug: repository.Text{"en": "imported"}, Organizer: &repository.OrganizerFields{}}
	if err := s.CreateRecord(ctx, p); err != nil {
		t.Fatalf("CreatePost over a dead claim: %v", err)
	}
	again := &repository.Record{ID: 77, Kind: repository.KindOrganizer, Status: "publish", Date: time.Now().UTC(),
		Title: repository.Text{"en": "Other"}, Slug: repository.Text{"en": "other"}, Organizer: &repository.OrganizerFields{}}
	if err := s.CreateRecord(ctx, again); !errors.Is(err, repository.ErrDuplicate) {
		t.Fatalf("CreatePost over a record: %v, want ErrDuplicate", err)
	}
	if got, err := s.GetRecordBySlug(ctx, repository.KindOrganizer, "en", "other"); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("the refused create left its slug: %v, %v", got, err)
	}
	next := &repository.Record{Kind: repository.KindOrganizer, Status: "publish", Title: repository.Text{"en": "Next"},
		Slug: repository.Text{"en": "next"}, Organizer: &repository.OrganizerFields{}}
	if err := s.CreateRecord(ctx, next); err != nil || next.ID <= 77 {
		t.Errorf("next create: ID %d, %v; want past 77", next.ID, err)
	}
}

// TestClaimSlugsReturnsOnlyInserted: claimSlugs hands back for release only
// the reservations it inserted, never one its owner held before (which the
// stored record may use). A create that loses its insert to a record of the
// same ID (created after createItem's existence check, by a writer that
// outlived its lock) then releases nothing of that record.
func TestClaimSlugsReturnsOnlyInserted(t *testing.T) {
	t.Parallel()
	s := leaseStore(t, mongotest.Start(t))
	ctx := t.Context()
	p := &repository.Record{ID: 91, Kind: repository.KindOrganizer, Status: "publish", Date: time.Now().UTC(),
		Title: repository.Text{"en": "Held"}, Slug: repository.Text{"en": "held"}, Organizer: &repository.OrganizerFields{}}
	if err := s.CreateRecord(ctx, p); err != nil {
		t.Fatal(err)
	}
	sp := s.postSlugs(repository.KindOrganizer)
	for _, tc := range []struct {
		name  string
		slugs repository.Text
		want  []string
	}{
		{"held slug", repository.Text{"en": "held"}, nil},
		{"held and new", repository.Text{"en": "held", "fr": "neuf"}, []string{sp.key("fr", "neuf")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slugs := tc.slugs.Clone()
			added, err := s.claimSlugs(ctx, sp, 91, nil, slugs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(added, tc.want) {
				t.Errorf("claimSlugs(%v) returned %q, want %q", tc.slugs, added, tc.want)
			}
			s.releaseSlugKeys(ctx, 91, added)
			if got, err := s.GetRecordBySlug(ctx, repository.KindOrganizer, "en", "held"); err != nil || got.ID != 91 {
				t.Errorf("GetPostBySlug(held) after the release = %v, %v; want post 91", got, err)
			}
		})
	}
}
