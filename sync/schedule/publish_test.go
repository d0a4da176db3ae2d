package schedule

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/internal/testkit"
	"github.com/calendar/eventcal/sync/lease"
)

// staleStore answers FindPosts with snapshots taken earlier (as a listing
// that raced with a write would), while every other call sees the store.
type staleStore struct {
	repository.Store
	snapshots []*repository.Record
}

func (s *staleStore) FindRecords(ctx context.Context, q repository.RecordQuery) ([]*repository.Record, error) {
	posts, err := s.Store.FindRecords(ctx, q)
	if err != nil || q.AfterID > 0 {
		return posts, err
	}
	for _, snap := range s.snapshots {
		if snap.Kind != q.Kind {
			continue
		}
		posts = slices.DeleteFunc(posts, func(p *repository.Record) bool { return p.ID == snap.ID })
		posts = append(posts, snap)
	}
	slices.SortFunc(posts, func(a, b *repository.Record) int { return int(a.ID - b.ID) })
	return posts, nil
}

func TestPublishDue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		kind   repository.Kind
		status string
		date   time.Time
		// change, when set, is applied after the listing saw the post.
		change     func(p *repository.Record)
		deleted    bool
		wantStatus string
	}{
		{"future event now due", repository.KindEvent, repository.StatusFuture, now.Add(-time.Minute), nil, false, repository.StatusPublish},
		{"future event due this second", repository.KindEvent, repository.StatusFuture, now, nil, false, repository.StatusPublish},
		{"future event not due yet", repository.KindEvent, repository.StatusFuture, now.Add(time.Second), nil, false, repository.StatusFuture},
		{"future venue due", repository.KindVenue, repository.StatusFuture, now.Add(-time.Hour), nil, false, repository.StatusPublish},
		{"future organizer due", repository.KindOrganizer, repository.StatusFuture, now.Add(-time.Hour), nil, false, repository.StatusPublish},
		{"draft with a past date", repository.KindEvent, repository.StatusDraft, now.Add(-time.Hour), nil, false, repository.StatusDraft},
		{"pending", repository.KindEvent, repository.StatusPending, now.Add(-time.Hour), nil, false, repository.StatusPending},
		{"private", repository.KindVenue, repository.StatusPrivate, now.Add(-time.Hour), nil, false, repository.StatusPrivate},
		{"trash", repository.KindEvent, repository.StatusTrash, now.Add(-time.Hour), nil, false, repository.StatusTrash},
		{"unscheduled meanwhile", repository.KindEvent, repository.StatusFuture, now.Add(-time.Hour),
			func(p *repository.Record) { p.Status = repository.StatusDraft }, false, repository.StatusDraft},
		{"moved later meanwhile", repository.KindOrganizer, repository.StatusFuture, now.Add(-time.Hour),
			func(p *repository.Record) { p.Date = now.Add(time.Hour) }, false, repository.StatusFuture},
		{"deleted meanwhile", repository.KindEvent, repository.StatusFuture, now.Add(-time.Hour), nil, true, ""},
	}
	s := newStack(t)
	ctx := t.Context()
	stale := &staleStore{Store: s.store}
	posts := make([]*repository.Record, len(tests))
	wantPublished := 0
	for i, tt := range tests {
		p := s.Post(t, tt.kind, tt.name, tt.status, tt.date)
		posts[i] = p
		if tt.change != nil || tt.deleted {
			snap := *p
			stale.snapshots = append(stale.snapshots, &snap)
		}
		if tt.change != nil {
			if _, err := s.store.UpdateRecord(ctx, p.ID, func(p *repository.Record) error { tt.change(p); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if tt.deleted {
			if err := s.store.DeleteRecord(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
		}
		if tt.wantStatus == repository.StatusPublish && tt.status != repository.StatusPublish {
			wantPublished++
		}
	}
	s.flush(t) // clear the marks of the set-up

	n, err := PublishDue(ctx, stale, now)
	if err != nil || n != wantPublished {
		t.Fatalf("PublishDue = %d, %v; want %d", n, err, wantPublished)
	}
	marks, err := s.store.PendingMarks(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.store.GetRecord(ctx, posts[i].ID)
			if tt.deleted {
				if err == nil {
					t.Errorf("the deleted post is back: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.wantStatus {
				t.Errorf("status = %s, want %s", got.Status, tt.wantStatus)
			}
			marked := slices.ContainsFunc(marks, func(m repository.IndexMark) bool { return m.ID == got.ID })
			if published := tt.wantStatus == repository.StatusPublish; marked != published {
				t.Errorf("marked for indexing = %v, want %v", marked, published)
			}
			if !got.Modified.Equal(posts[i].Modified) {
				t.Errorf("modified changed from %v to %v", posts[i].Modified, got.Modified)
			}
		})
	}
	// Nothing is left to publish.
	if n, err := PublishDue(ctx, s.store, now); err != nil || n != 0 {
		t.Errorf("second PublishDue = %d, %v; want 0", n, err)
	}
}

// TestScheduledPublishFenced: the scheduled publishing of a former leader
// that paused past its lease writes nothing, though its own clock says it
// still leads; a holder that passes the fence publishes.
func TestScheduledPublishFenced(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	s := newStack(t)
	ctx := t.Context()
	p := s.Post(t, repository.KindEvent, "due", repository.StatusFuture, now.Add(-time.Minute))
	s.flush(t)
	tests := []struct {
		name  string
		lease lease.Lease
		want  string
	}{
		{"paused former leader", testkit.PausedLease{}, repository.StatusFuture},
		{"holder", lease.Held(), repository.StatusPublish},
	}
	for _, tc := range tests {
		if err := tc.lease.IsLeader(ctx); err != nil {
			t.Fatalf("%s: IsLeader = %v; the scenario needs nil", tc.name, err)
		}
		runScheduledPublish(ctx, s.store, tc.lease, nil, now, testkit.Quiet)
		got, err := s.store.GetRecord(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tc.want {
			t.Errorf("%s: status %s, want %s", tc.name, got.Status, tc.want)
		}
	}
}
